// The client lands what the wallet signed as the service lands its own transactions, against the
// service and the embedded chain, through an RPC node that misbehaves as real ones do: a send
// dropped is sent again (the same bytes) until it lands, a transaction counts only once confirmed,
// a node throttling for a moment is weather, and a refusal in preflight is a clear error.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Address, Signature } from '@solana/kit';
import { SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR, SolanaError } from '@solana/kit';
import {
  type BroadcastProgress,
  isLandingError,
  signAndBroadcastBundle,
  type TransferRouterClient,
} from '../../clients/typescript/src/index.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { clientFor, kitRpc, listen, quoteWithClient, scriptedRpc, sentSignature } from './helpers.ts';

describe('the TypeScript client lands transactions as the service does', () => {
  let t: TestApp;
  let client: TransferRouterClient;
  let usdc: Address;
  before(async () => {
    t = await createTestApp();
    const caller = await t.newCaller('test', { rateLimitMultiplier: 100 });
    client = clientFor(await listen(t), caller);
    usdc = await createMint(t.chain, { decimals: 6 });
  });
  after(() => t.close());

  const quote = () => quoteWithClient(t, client, { mint: usdc, hops: 3, arrivalSeconds: 60 });

  test('a send the node drops is sent again, the same bytes, until it lands', async () => {
    const route = await quote();
    const sent = new Map<Signature, string[]>();
    const dropped: Signature[] = [];
    const { rpc } = scriptedRpc(t, async (request, forward) => {
      if (request.method !== 'sendTransaction') return forward();
      const signature = sentSignature(request);
      sent.set(signature, [...(sent.get(signature) ?? []), String(request.params[0])]);
      // The node says it took the first send of the bundle's first two transactions, and drops it.
      if (dropped.length < 2 && !dropped.includes(signature)) {
        dropped.push(signature);
        return { jsonrpc: '2.0', id: request.id, result: signature };
      }
      return forward();
    });
    const { transfer, signatures } = await signAndBroadcastBundle(client, {
      transferId: route.id,
      signer: route.source,
      rpc,
    });
    assert.equal(transfer.status, 'processing');
    assert.deepEqual(dropped, [signatures.keeperFundingSignature, signatures.routeInitSignatures[0]]);
    for (const signature of dropped) {
      const bytes = sent.get(signature)!;
      assert.ok(bytes.length >= 2, `${signature} was sent again`);
      assert.equal(new Set(bytes).size, 1, 'the same bytes each time');
    }
    const statuses = await t.chain.chain.getSignatureStatuses(dropped, { searchTransactionHistory: true });
    assert.deepEqual(
      statuses.map((status) => status?.err),
      [null, null],
      'each landed, once',
    );
  });

  test('a transaction counts as landed only once confirmed, never while processed', async () => {
    const route = await quote();
    // The confirmation statuses the node answered for each transaction, in order.
    const answered = new Map<string, string[]>();
    const { rpc } = scriptedRpc(t, async (request, forward) => {
      const answer = await forward();
      if (request.method !== 'getSignatureStatuses') return answer;
      const [signatures] = request.params as [string[]];
      const { value } = answer.result as { value: ({ confirmationStatus: string } | null)[] };
      for (const [index, status] of value.entries()) {
        if (!status) continue;
        const seen = answered.get(signatures[index]!) ?? [];
        // Each transaction is shown processed, on a fork that may yet be dropped, at its first three reads.
        if (seen.length < 3) status.confirmationStatus = 'processed';
        answered.set(signatures[index]!, [...seen, status.confirmationStatus]);
      }
      return answer;
    });
    const whenLanded = new Map<Signature, string[]>();
    const { transfer } = await signAndBroadcastBundle(client, {
      transferId: route.id,
      signer: route.source,
      rpc,
      onProgress: (event) => {
        if (event.kind === 'confirmed') whenLanded.set(event.signature, [...answered.get(event.signature)!]);
      },
    });
    assert.equal(transfer.status, 'processing');
    assert.ok(whenLanded.size >= 4, 'every transaction of the bundle');
    for (const [signature, statuses] of whenLanded) {
      assert.deepEqual(statuses.slice(0, 3), ['processed', 'processed', 'processed'], signature);
      assert.equal(statuses.length, 4, 'landed at the first read that was not processed');
      assert.match(statuses[3]!, /^(confirmed|finalized)$/);
    }
  });

  test('a node throttling or failing for a moment is weather: each call is tried again', async () => {
    const route = await quote();
    const refused = new Set<string>();
    const { rpc } = scriptedRpc(t, async (request, forward) => {
      // The first send, and the first status read, meet a node answering 429 and 503.
      if (
        !refused.has(request.method) &&
        ['sendTransaction', 'getSignatureStatuses'].includes(request.method)
      ) {
        refused.add(request.method);
        throw new SolanaError(SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR, {
          headers: new Headers(),
          message: 'throttled',
          statusCode: request.method === 'sendTransaction' ? 429 : 503,
        });
      }
      return forward();
    });
    const { transfer } = await signAndBroadcastBundle(client, {
      transferId: route.id,
      signer: route.source,
      rpc,
    });
    assert.equal(transfer.status, 'processing');
    assert.deepEqual([...refused].sort(), ['getSignatureStatuses', 'sendTransaction']);
  });

  test('a transaction the node refuses in preflight is a LandingError saying so: it never reached the chain, nothing was charged', async () => {
    const route = await quote();
    const { preparedTxs: bundle } = await client.prepareTransfer(route.id);
    // The wallet spends its tokens elsewhere before it broadcasts: route creation cannot take them.
    await t.chain.cheats.setTokenAccount(route.source.address, usdc, { amount: 0n });
    const progress: BroadcastProgress[] = [];
    const error = await signAndBroadcastBundle(client, {
      transferId: route.id,
      signer: route.source,
      ...kitRpc(t),
      bundle,
      onProgress: (event) => void progress.push(event),
    }).catch((caught: unknown) => caught);
    assert.ok(isLandingError(error, 'refused'), String(error));
    assert.match(
      error.message,
      /^transaction \w+ was refused by the node's preflight check: it never reached the chain and nothing was charged \(.+\)$/,
    );
    assert.deepEqual(
      progress.map((event) => ('group' in event ? `${event.kind}:${event.group}` : event.kind)),
      ['prepared', 'confirmed:keeperFunding', 'keeper_funding_reported'],
    );
    assert.deepEqual(
      await t.chain.chain.getSignatureStatuses([error.signature], { searchTransactionHistory: true }),
      [null],
      'not on chain: no fee',
    );
  });
});
