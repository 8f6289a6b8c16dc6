// Rent reclaim through the API, end to end: after a route settled, the bundle reclaim-rent/prepare
// hands out closes every account the route still has and sweeps its keeper, and the source
// receives exactly `reclaimableLamports`; a source that reclaimed is left out of pocket only by
// the network's fees, the flat fee, the amount it sent and the rent of accounts others own.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Address } from '@solana/kit';
import { type Caller, createTestApp, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { deployRoute, type QuotedRoute, quoteRoute } from '../helpers/route.ts';
import {
  assertError,
  ata,
  broadcast,
  confirmReclaim,
  eventTypes,
  failLastHop,
  feesPaidBy,
  getTransfer,
  holdings,
  lamports,
  prepareRecovery,
  routeRow,
  runHops,
  sign,
  tokens,
  UNLIMITED,
} from './helpers.ts';

describe('reclaiming the rent of a settled route', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
  });
  after(() => t.close());

  /** A route deployed and run to settlement by the keeper. */
  async function settledRoute(hops: number, mint: Address) {
    const route = await quoteRoute(t, caller, { hops, mint, arrivalSeconds: 600 });
    const before = await holdings(t, route);
    await deployRoute(t, caller, route);
    await runHops(t, route.id, hops);
    const settled = await getTransfer(caller, route.id);
    assert.equal(settled.phase, 'settled');
    return { route, before, settled };
  }

  /** Broadcasts `count` (default all) of a reclaim bundle and reports them; answers the confirm's body. */
  async function reclaim(route: QuotedRoute, count?: number) {
    const bundle = await prepareRecovery(caller, route.id, 'reclaim');
    const signatures = await broadcast(t, route.source, bundle, count === undefined ? {} : { count });
    const confirmed = await confirmReclaim(caller, route.id, signatures);
    assert.equal(confirmed.statusCode, 200, confirmed.body);
    assert.deepEqual(confirmed.json(), { confirmed: signatures, failed: [] });
    return { bundle, signatures };
  }

  /**
   * Every account of the route is closed, the keeper is empty, and the source paid exactly the
   * network's fees (its own and its keeper's), the flat fee, the rent of the accounts its bundle
   * created for others, and the amount (in tokens, or in lamports on native SOL).
   */
  async function assertOnlyCostsLeft(route: QuotedRoute, before: Awaited<ReturnType<typeof holdings>>) {
    const row = await routeRow(t, route.id);
    const native = route.mint === SOL_MINT;
    const tokenRent = BigInt(await t.chain.chain.getMinimumBalanceForRentExemption(165));
    const othersRent =
      (native ? 0n : await lamports(t, await ata(route.recipient, route.mint))) +
      (before.feeTokenExists ? 0n : tokenRent);
    const networkFees = (await feesPaidBy(t, route.source.address)) + (await feesPaidBy(t, row.keeper));
    assert.equal(
      await lamports(t, route.source.address),
      before.lamports -
        networkFees -
        othersRent -
        BigInt(route.estimate.totalFlatFeeLamports) -
        (native ? route.amountRaw : 0n),
    );
    assert.equal(
      await tokens(t, route.source.address, route.mint),
      before.tokens - (native ? 0n : route.amountRaw),
    );
    assert.equal(await lamports(t, row.keeper), 0n);
    assert.equal(await t.chain.chain.getAccount(row.route), null);
  }

  test('3 hops, SPL: the source receives exactly reclaimableLamports; phase reclaimed', async () => {
    const { route, before, settled } = await settledRoute(3, usdc);
    assert.equal(settled.recovery.canReclaimRent, true);
    assert.equal(settled.recovery.canRescue, false);
    const lamportsBefore = await lamports(t, route.source.address);
    const feesBefore = await feesPaidBy(t, route.source.address);
    const { bundle } = await reclaim(route);
    assert.deepEqual(bundle.body.reclaimable, {
      totalLamports: settled.recovery.reclaimableLamports,
      stepCount: 3,
    });
    assert.equal(
      (await lamports(t, route.source.address)) -
        lamportsBefore +
        (await feesPaidBy(t, route.source.address)) -
        feesBefore,
      BigInt(settled.recovery.reclaimableLamports),
    );
    const reclaimed = await getTransfer(caller, route.id);
    assert.equal(reclaimed.phase, 'reclaimed');
    assert.equal(reclaimed.status, 'completed');
    assert.deepEqual(reclaimed.recovery, {
      canRescue: false,
      rescuableLamports: 0,
      rescuableAccounts: [],
      canReclaimRent: false,
      reclaimableLamports: 0,
    });
    assert.deepEqual((await eventTypes(t, route.id)).slice(-2), [
      'transfer.rent_reclaimed',
      'transfer.phase_changed',
    ]);
    await assertOnlyCostsLeft(route, before);
    assertError(
      await caller.post(`/api/v1/transfers/${route.id}/reclaim-rent/prepare`),
      409,
      'MH_082',
      'transferId',
    );
  });

  test('10 hops, native SOL, interrupted after the first transaction and resumed', async () => {
    const { route, before, settled } = await settledRoute(10, SOL_MINT as Address);
    const announced = BigInt(settled.recovery.reclaimableLamports);
    const lamportsBefore = await lamports(t, route.source.address);
    const feesBefore = await feesPaidBy(t, route.source.address);
    const { bundle } = await reclaim(route, 1);
    assert.equal(bundle.txs.length, 2);
    const partial = await getTransfer(caller, route.id);
    assert.equal(partial.phase, 'settled', 'not all is reclaimed yet');
    assert.equal(
      (await eventTypes(t, route.id)).includes('transfer.rent_reclaimed'),
      false,
      'the reclaim is not complete',
    );
    t.clock.advance(1_000);
    const { bundle: rest } = await reclaim(route);
    assert.equal(rest.txs.length, 1);
    assert.equal(rest.totalLamports, partial.recovery.reclaimableLamports);
    assert.equal(
      (await lamports(t, route.source.address)) -
        lamportsBefore +
        (await feesPaidBy(t, route.source.address)) -
        feesBefore,
      announced,
      'both bundles together returned what was announced',
    );
    assert.equal((await getTransfer(caller, route.id)).phase, 'reclaimed');
    const events = await eventTypes(t, route.id);
    assert.equal(events.filter((type) => type === 'transfer.rent_reclaimed').length, 1);
    await assertOnlyCostsLeft(route, before);
  });

  test('prepare: MH_080 before settlement (a running, a failed route), MH_030, MH_016', async () => {
    assertError(
      await caller.post('/api/v1/transfers/999999/reclaim-rent/prepare'),
      404,
      'MH_030',
      'transferId',
    );
    const running = await quoteRoute(t, caller, { hops: 3, mint: usdc, arrivalSeconds: 600 });
    await deployRoute(t, caller, running);
    const early = await caller.post(`/api/v1/transfers/${running.id}/reclaim-rent/prepare`);
    assertError(early, 409, 'MH_080', 'transferId');
    assert.match(early.json().error.message, /phase executing/);
    await failLastHop(t, running);
    const failed = await caller.post(`/api/v1/transfers/${running.id}/reclaim-rent/prepare`);
    assertError(failed, 409, 'MH_080', 'transferId');
    assert.match(failed.json().error.message, /rescue it instead/);
    assertError(
      await caller.post(`/api/v1/transfers/${running.id}/reclaim-rent/prepare`, { extra: 1 }),
      400,
      'MH_016',
      'extra',
    );
    assertError(await confirmReclaim(caller, running.id, ['x']), 400, 'MH_016', 'reclaimSignatures.0');
  });

  test('confirm answers each signature: another or a stale bundle’s (MH_083), not broadcast (MH_036), failed (MH_037)', async () => {
    const { route } = await settledRoute(3, usdc);
    const other = await settledRoute(3, usdc);
    const [otherSignature] = await broadcast(
      t,
      other.route.source,
      await prepareRecovery(caller, other.route.id, 'reclaim'),
    );
    const noBundle = await confirmReclaim(caller, route.id, [otherSignature!]);
    assert.equal(noBundle.statusCode, 200);
    assert.deepEqual(noBundle.json().confirmed, []);
    assert.match(noBundle.json().failed[0].error, /^MH_083: no reclaim bundle/);

    const bundle = await prepareRecovery(caller, route.id, 'reclaim');
    const unsent = await sign(route.source, bundle.txs[0]!.base64);
    const notYet = (await confirmReclaim(caller, route.id, [otherSignature!, unsent.signature])).json();
    assert.deepEqual(notYet.confirmed, []);
    assert.deepEqual(
      notYet.failed.map((entry: { signature: string; error: string }) => [
        entry.signature,
        entry.error.slice(0, 7),
      ]),
      [
        [otherSignature, 'MH_083:'],
        [unsent.signature, 'MH_036:'],
      ],
    );
    // The keeper's balance changed since prepare: the sweep the transaction carries cannot be paid.
    const row = await routeRow(t, route.id);
    await t.chain.cheats.setAccount(row.keeper, { lamports: (await lamports(t, row.keeper)) - 1n });
    const [failed] = await broadcast(t, route.source, bundle, { skipPreflight: true });
    const answer = (await confirmReclaim(caller, route.id, [failed!])).json();
    assert.deepEqual(answer.confirmed, []);
    assert.equal(answer.failed[0].signature, failed);
    assert.match(answer.failed[0].error, /^MH_037: /);

    // Prepared again, the earlier bundle is stale: its signatures no longer count.
    await t.chain.cheats.setAccount(row.keeper, { lamports: (await lamports(t, row.keeper)) + 1n });
    t.clock.advance(1_000);
    const latest = await prepareRecovery(caller, route.id, 'reclaim');
    assert.match(
      (await confirmReclaim(caller, route.id, [failed!])).json().failed[0].error,
      /^MH_083: .*latest/,
    );
    const signatures = await broadcast(t, route.source, latest);
    assert.deepEqual((await confirmReclaim(caller, route.id, signatures)).json(), {
      confirmed: signatures,
      failed: [],
    });
    assert.equal((await getTransfer(caller, route.id)).phase, 'reclaimed');
  });
});
