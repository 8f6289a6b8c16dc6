// Rescue through the API, end to end: routes that cannot finish (marked failed by the keeper, past
// their deadline with no keeper left, abandoned half-deployed) are given back to the source by the
// bundle rescue/prepare hands out, signed by the source's wallet; the source ends with exactly its
// tokens and lamports less what the network took and the rent of accounts that belong to others.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Address } from '@solana/kit';
import { type Caller, createTestApp, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { deployRoute, quoteRoute } from '../helpers/route.ts';
import {
  assertError,
  assertMadeWhole,
  broadcast,
  confirmRescue,
  eventTypes,
  failLastHop,
  feesPaidBy,
  getTransfer,
  holdings,
  lamports,
  prepareRecovery,
  rescueThroughApi,
  routeRow,
  runHops,
  sign,
  travelTo,
  UNLIMITED,
} from './helpers.ts';

describe('rescuing a route that cannot finish', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
  });
  after(() => t.close());

  test('a route the keeper marked failed (3 hops, SPL): everything back', async () => {
    const route = await quoteRoute(t, caller, { hops: 3, mint: usdc, arrivalSeconds: 600 });
    const before = await holdings(t, route);
    await deployRoute(t, caller, route);
    await failLastHop(t, route);
    const failed = await getTransfer(caller, route.id);
    assert.equal(failed.phase, 'failed');
    assert.equal(failed.status, 'failed');
    assert.deepEqual(
      failed.recovery.rescuableAccounts.map((account: { kind: string }) => account.kind),
      [
        'route_pda',
        'step_state',
        'step_state',
        'step_state',
        'ata',
        'ata',
        'ata',
        'orchestrator_config',
        'keeper',
      ],
    );
    // Before any rescue bundle, no signature can match one.
    const noBundle = await confirmRescue(caller, route.id, [failed.signatures.routeInit[0]]);
    assertError(noBundle, 400, 'MH_083', 'rescueSignatures');
    assert.match(noBundle.json().error.message, /No rescue bundle/);
    await rescueThroughApi(t, caller, route);
    await assertMadeWhole(t, route, before);
  });

  test('a 10-hop route the keeper marked failed takes two transactions', async () => {
    const route = await quoteRoute(t, caller, { hops: 10, mint: usdc, arrivalSeconds: 600 });
    const before = await holdings(t, route);
    await deployRoute(t, caller, route);
    await failLastHop(t, route);
    const bundle = await prepareRecovery(caller, route.id, 'rescue');
    assert.equal(bundle.txs.length, 2);
    const keeper = (await routeRow(t, route.id)).keeper;
    assert.deepEqual(
      bundle.txs.map((tx) => tx.partialSigners),
      [[], [keeper]],
      'the keeper co-signs its sweep in the last transaction',
    );
    await rescueThroughApi(t, caller, route);
    await assertMadeWhole(t, route, before);
  });

  test('native SOL, 10 hops, overdue with the keeper gone: rescued in two steps, the SOL unwrapped', async () => {
    const route = await quoteRoute(t, caller, { hops: 10, mint: SOL_MINT as Address, arrivalSeconds: 600 });
    const before = await holdings(t, route);
    await deployRoute(t, caller, route);
    await runHops(t, route.id, 4);
    // No keeper runs from here on; the route passes its deadline.
    const row = await routeRow(t, route.id);
    await travelTo(t, row.deadlineAt!);
    assertError(
      await caller.post(`/api/v1/transfers/${route.id}/rescue/prepare`),
      409,
      'MH_080',
      'transferId',
    );
    // Slots are 400 ms: two seconds on, the chain's clock is past the deadline whatever the slot.
    await travelTo(t, row.deadlineAt! + 2n);
    const first = await prepareRecovery(caller, route.id, 'rescue');
    const overdue = await getTransfer(caller, route.id);
    assert.equal(overdue.phase, 'recoverable');
    assert.equal(overdue.status, 'failed');
    assert.equal(overdue.lastError.code, 'MH_031');
    assert.match(overdue.lastError.message, /deadline/);
    assert.deepEqual((await eventTypes(t, route.id)).slice(-3), [
      'transfer.phase_changed',
      'transfer.failed',
      'transfer.recoverable',
    ]);
    assert.equal(first.totalLamports, overdue.recovery.rescuableLamports);
    assert.equal(first.txs.length, 2);
    assert.equal(first.txs[0]!.partialSigners.length, 1, 'a fresh account the SOL is unwrapped from');

    // The wallet sends the first transaction only: the transfer stays recoverable, with what is left.
    const lamportsBefore = await lamports(t, route.source.address);
    const feesBefore = await feesPaidBy(t, route.source.address);
    const [firstSignature] = await broadcast(t, route.source, first, { count: 1 });
    const partial = await confirmRescue(caller, route.id, [firstSignature!]);
    assert.equal(partial.statusCode, 200, partial.body);
    assert.equal(partial.json().transfer.phase, 'recoverable');
    const left = partial.json().transfer.recovery;
    assert.equal(left.canRescue, true);
    assert.equal(
      BigInt(left.rescuableLamports) +
        (await lamports(t, route.source.address)) -
        lamportsBefore +
        (await feesPaidBy(t, route.source.address)) -
        feesBefore,
      BigInt(first.totalLamports),
      'what came back plus what is left is what was rescuable',
    );
    assert.deepEqual(await getTransfer(caller, route.id).then((read) => read.recovery), left);

    // Prepared again, the bundle covers what is left.
    const { signatures } = await rescueThroughApi(t, caller, route);
    assert.equal(signatures.length, 1);
    await assertMadeWhole(t, route, before);
  });

  /**
   * A 3-hop token route deployed and left past its deadline, then looked at (by a first rescue
   * bundle, which records it `recoverable`).
   */
  async function overdueRoute() {
    const route = await quoteRoute(t, caller, { hops: 3, mint: usdc, arrivalSeconds: 600 });
    await deployRoute(t, caller, route);
    await travelTo(t, (await routeRow(t, route.id)).deadlineAt! + 2n);
    await prepareRecovery(caller, route.id, 'rescue');
    assert.equal((await getTransfer(caller, route.id)).phase, 'recoverable');
    return route;
  }

  /** A new slot, so that a bundle prepared now carries a new blockhash (a wallet's bytes differ). */
  const nextSlot = () => t.clock.advance(1_000);

  test('rescue/prepare: MH_030, MH_080 before the route fails and after it is rescued, MH_016, MH_070', async () => {
    assertError(await caller.post('/api/v1/transfers/999999/rescue/prepare'), 404, 'MH_030', 'transferId');
    const quoted = await quoteRoute(t, caller, { hops: 3, mint: usdc });
    const early = await caller.post(`/api/v1/transfers/${quoted.id}/rescue/prepare`);
    assertError(early, 409, 'MH_080', 'transferId');
    assert.match(early.json().error.message, /phase quoted/);
    assertError(
      await caller.post(`/api/v1/transfers/${quoted.id}/rescue/prepare`, { anything: true }),
      400,
      'MH_016',
      'anything',
    );
    const noKey = await t.app.inject({
      method: 'POST',
      url: `/api/v1/transfers/${quoted.id}/rescue/prepare`,
      headers: caller.headers,
    });
    assertError(noKey, 400, 'MH_070', 'Idempotency-Key');

    const route = await overdueRoute();
    await rescueThroughApi(t, caller, route);
    const after = await caller.post(`/api/v1/transfers/${route.id}/rescue/prepare`);
    assertError(after, 409, 'MH_080', 'transferId');
    assert.match(after.json().error.message, /reclaim-rent/);
  });

  test('rescue/confirm: MH_083 for another transfer’s bundle and a stale one; then MH_081', async () => {
    const route = await overdueRoute();
    const other = await overdueRoute();
    const [otherSignature] = await broadcast(
      t,
      other.source,
      await prepareRecovery(caller, other.id, 'rescue'),
    );
    assertError(
      await confirmRescue(caller, route.id, [otherSignature!]),
      400,
      'MH_083',
      'rescueSignatures[0]',
    );

    nextSlot();
    const stale = await prepareRecovery(caller, route.id, 'rescue');
    nextSlot();
    const latest = await prepareRecovery(caller, route.id, 'rescue');
    assert.notEqual(stale.txs[0]!.base64, latest.txs[0]!.base64);
    // Another transfer's bundle, signed by its own source: not a transaction of this bundle.
    const wrong = await confirmRescue(caller, route.id, [otherSignature!]);
    assertError(wrong, 400, 'MH_083', 'rescueSignatures[0]');
    assert.match(wrong.json().error.message, /latest rescue bundle/);
    assert.equal((await confirmRescue(caller, other.id, [otherSignature!])).statusCode, 200);

    // The stale bundle is broadcast and lands: its signatures are not the latest bundle's.
    const staleSignatures = await broadcast(t, route.source, stale);
    assertError(await confirmRescue(caller, route.id, staleSignatures), 400, 'MH_083', 'rescueSignatures[0]');
    assert.equal((await getTransfer(caller, route.id)).phase, 'recoverable');
    // Nothing is left on chain: prepare says so and records the rescue the chain shows.
    const nothing = await caller.post(`/api/v1/transfers/${route.id}/rescue/prepare`);
    assertError(nothing, 409, 'MH_081', 'transferId');
    const rescued = await getTransfer(caller, route.id);
    assert.equal(rescued.phase, 'rescued');
    assert.equal(rescued.status, 'refunded');
    assert.deepEqual((await eventTypes(t, route.id)).slice(-3), [
      'transfer.rescued',
      'transfer.refunded',
      'transfer.phase_changed',
    ]);
  });

  test('rescue/confirm: MH_036 for a transaction not broadcast, MH_037 for one that failed, MH_016, replay', async () => {
    const route = await overdueRoute();
    const bundle = await prepareRecovery(caller, route.id, 'rescue');
    const unsent = await sign(route.source, bundle.txs[0]!.base64);
    assertError(
      await confirmRescue(caller, route.id, [unsent.signature]),
      404,
      'MH_036',
      'rescueSignatures[0]',
    );

    // The source's token account is frozen: the tokens cannot go back, the transaction fails on chain.
    await t.chain.cheats.setTokenAccount(route.source.address, usdc, { state: 'frozen' });
    const failed = await broadcast(t, route.source, bundle, { skipPreflight: true });
    assertError(await confirmRescue(caller, route.id, failed), 422, 'MH_037', 'rescueSignatures[0]');
    await t.chain.cheats.setTokenAccount(route.source.address, usdc, { state: 'initialized' });

    assertError(await confirmRescue(caller, route.id, []), 400, 'MH_016', 'rescueSignatures');
    assertError(
      await confirmRescue(caller, route.id, ['not-a-signature']),
      400,
      'MH_016',
      'rescueSignatures.0',
    );
    assertError(
      await caller.post(`/api/v1/transfers/${route.id}/rescue/confirm`, {}),
      400,
      'MH_016',
      'rescueSignatures',
    );

    nextSlot();
    const retry = await prepareRecovery(caller, route.id, 'rescue');
    const signatures = await broadcast(t, route.source, retry);
    const headers = { 'idempotency-key': 'rescue-confirm-replay' };
    const first = await caller.post(
      `/api/v1/transfers/${route.id}/rescue/confirm`,
      { rescueSignatures: signatures },
      headers,
    );
    assert.equal(first.statusCode, 200, first.body);
    const replay = await caller.post(
      `/api/v1/transfers/${route.id}/rescue/confirm`,
      { rescueSignatures: signatures },
      headers,
    );
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, first.body);
    // Confirmed again with a new key: the same transfer, no second set of events.
    const again = await confirmRescue(caller, route.id, signatures);
    assert.equal(again.json().transfer.phase, 'rescued');
    const events = await eventTypes(t, route.id);
    assert.equal(events.filter((type) => type === 'transfer.rescued').length, 1);
  });
});
