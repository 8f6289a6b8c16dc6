// Rescue of routes stopped before they ran: flagged by compliance screening (the deposit is
// forfeited, everything else comes back) and a deployment abandoned half-way.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Address } from '@solana/kit';
import { decodeRouterConfig } from '../../src/chain/router/accounts.ts';
import { type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { deployRoute, quoteRoute } from '../helpers/route.ts';
import { type Bundle, broadcastBundle } from '../helpers/wallet.ts';
import {
  assertMadeWhole,
  eventTypes,
  getTransfer,
  holdings,
  rescueThroughApi,
  UNLIMITED,
} from './helpers.ts';

describe('rescuing a route flagged by screening', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  const flagged = new Set<string>();
  before(async () => {
    t = await createTestApp({
      platform: {
        settings: { screeningRequired: true },
        screening: { screen: async (address) => (flagged.has(address) ? 'flagged' : 'clear') },
      },
    });
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
  });
  after(() => t.close());

  test('the tokens and everything but the forfeited deposit come back', async () => {
    const route = await quoteRoute(t, caller, { hops: 5, mint: usdc, arrivalSeconds: 600 });
    flagged.add(route.recipient);
    const before = await holdings(t, route);
    await deployRoute(t, caller, route);
    await t.keeper.runOnce();
    const transfer = await getTransfer(caller, route.id);
    assert.equal(transfer.phase, 'recoverable');
    assert.equal(transfer.status, 'failed');
    assert.match(transfer.lastError.message, /screening flagged/);
    const config = await t.chain.chain.getAccount(t.platform.configAddress);
    const deposit = decodeRouterConfig(config!.data).screeningDepositLamports;
    await rescueThroughApi(t, caller, route);
    await assertMadeWhole(t, route, before, deposit);
  });
});

describe('rescuing a deployment abandoned half-way', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  before(async () => {
    // A short quote lifetime: deployments are abandoned 10 minutes after expiresAt.
    t = await createTestApp({ config: { quoteTtlMs: 60_000 } });
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
  });
  after(() => t.close());

  for (const through of ['routeInit', 'orchestratorInit'] as const) {
    test(`broadcast through ${through}: recoverable, then everything back`, async () => {
      const route = await quoteRoute(t, caller, { hops: 10, mint: usdc, arrivalSeconds: 600 });
      const before = await holdings(t, route);
      const prepared = await caller.post(`/api/v1/transfers/${route.id}/prepare`);
      assert.equal(prepared.statusCode, 200, prepared.body);
      const bundle = prepared.json().preparedTxs as Bundle;
      await broadcastBundle(t.chain.chain, route.source, bundle, { through });
      t.clock.advance(11 * 60_000);
      await t.reconciler.runOnce();
      const transfer = await getTransfer(caller, route.id);
      assert.equal(transfer.phase, 'recoverable');
      assert.deepEqual((await eventTypes(t, route.id)).slice(-3), [
        'transfer.phase_changed',
        'transfer.failed',
        'transfer.recoverable',
      ]);
      await rescueThroughApi(t, caller, route);
      await assertMadeWhole(t, route, before);
    });
  }
});
