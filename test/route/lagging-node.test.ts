// Confirm-broadcast when the service's RPC node is behind the source's: the source confirmed its
// transactions on its own node, the service's shows them only `processed` for a while (its
// `getTransaction`, which reads confirmed blocks, does not find them yet). The service looks again
// instead of answering MH_036 for transactions that did land.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Address } from '@solana/kit';
import { type FaultProxy, startFaultProxy } from '@transfer-router/rpc-faults';
import { type Caller, createTestApp, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { deployRoute, quoteRoute } from '../helpers/route.ts';

describe("confirm-broadcast through an RPC node that confirms later than the source's", () => {
  let t: TestApp;
  let proxy: FaultProxy;
  let lagging: TestApp;
  let caller: Caller;
  before(async () => {
    t = await createTestApp();
    proxy = await startFaultProxy({
      upstream: t.chain.rpcUrl,
      faults: { processedFirst: 1, processedForMs: 1_000 },
    });
    lagging = await createTestApp({ peer: t, chainRpcUrl: proxy.url });
    caller = await lagging.newCaller('test', { rateLimitMultiplier: 1000 });
  });
  after(async () => {
    await lagging.close();
    await proxy.close();
    await t.close();
  });

  test('the route is taken over: each reported signature is waited for until the node confirms it', async () => {
    const route = await quoteRoute(lagging, caller, {
      hops: 3,
      mint: SOL_MINT as Address,
      arrivalSeconds: 600,
    });
    // Broadcast straight to the chain and confirmed there, as a wallet does; reported to the service.
    const transfer = await deployRoute(lagging, caller, route);
    assert.equal(transfer.status, 'processing');
    assert.ok(proxy.stats().processedShown >= 2, 'the node showed the reported transactions processed first');
  });
});
