// A property over the route's life: wherever it stops (a deployment abandoned after any
// transaction, screening flagging it, a hop failing for good, the keeper gone after any hop, or
// settlement) and however its recovery goes (at once or interrupted half-way), once the source has
// recovered what the API offers, every lamport and token is accounted for to the base unit: the
// source, the recipient and the platform's fee accounts (the protocol config and its token account
// of the mint) hold what they held before, less exactly the fees paid to the network; nothing is
// left in the route's accounts or its keeper; and each recovery returned exactly the `recovery`
// figure announced before it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Address } from '@solana/kit';
import fc from 'fast-check';
import { findRouteAddresses } from '../../src/chain/router/pda.ts';
import { type Caller, createTestApp, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { deployRoute, type QuotedRoute, quoteRoute } from '../helpers/route.ts';
import type { Bundle } from '../helpers/wallet.ts';
import {
  ata,
  broadcast,
  confirmReclaim,
  confirmRescue,
  failLastHop,
  feesPaidBy,
  getTransfer,
  lamports,
  prepareRecovery,
  routeRow,
  runHops,
  sign,
  tokens,
  travelTo,
  UNLIMITED,
} from './helpers.ts';

/** Where a route's life stops, and how its recovery goes. */
interface Scenario {
  native: boolean;
  hops: number;
  stop:
    | { kind: 'abandoned'; sent: number }
    | { kind: 'flagged' }
    | { kind: 'hop_failed' }
    | { kind: 'keeper_gone'; hopsRun: number }
    | { kind: 'settled' };
  interrupted: boolean;
}

const scenarios: fc.Arbitrary<Scenario> = fc
  .record({
    native: fc.boolean(),
    hops: fc.integer({ min: 3, max: 10 }),
    stop: fc.oneof(
      // How many of the bundle's transactions were sent, as a share of all but the last.
      fc.record({
        kind: fc.constant('abandoned' as const),
        sent: fc.double({ min: 0, max: 1, noNaN: true }),
      }),
      fc.record({ kind: fc.constant('flagged' as const) }),
      fc.record({ kind: fc.constant('hop_failed' as const) }),
      fc.record({
        kind: fc.constant('keeper_gone' as const),
        hopsRun: fc.double({ min: 0, max: 1, noNaN: true }),
      }),
      fc.record({ kind: fc.constant('settled' as const) }),
    ),
    interrupted: fc.boolean(),
  })
  .map((scenario) => {
    const { stop, hops } = scenario;
    if (stop.kind === 'keeper_gone') {
      return {
        ...scenario,
        stop: { kind: 'keeper_gone', hopsRun: Math.min(hops - 1, Math.floor(stop.hopsRun * hops)) },
      };
    }
    // A native route has no recipient token account to refuse the last hop: its keeper is gone instead.
    if (stop.kind === 'hop_failed' && scenario.native) {
      return { ...scenario, stop: { kind: 'keeper_gone', hopsRun: hops - 1 } };
    }
    return scenario as Scenario;
  });

describe('conservation over random failure points', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  const flagged = new Set<string>();
  before(async () => {
    t = await createTestApp({
      // A short quote lifetime: deployments are abandoned 10 minutes after expiresAt.
      config: { quoteTtlMs: 60_000 },
      platform: {
        settings: { screeningRequired: true },
        screening: { screen: async (address) => (flagged.has(address) ? 'flagged' : 'clear') },
      },
    });
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
  });
  after(() => t.close());

  /** Every account whose lamports or tokens the property counts: the parties' and the route's. */
  async function ledger(route: QuotedRoute, keeper: Address | null) {
    const mint = route.mint;
    const parties = [
      route.source.address,
      route.recipient,
      t.platform.configAddress,
      await ata(route.source.address, mint),
      await ata(route.recipient, mint),
      await ata(t.platform.configAddress, mint),
      ...(keeper ? [keeper] : []),
    ];
    const balances = await Promise.all(parties.map((address) => lamports(t, address)));
    const holders = [route.source.address, route.recipient, t.platform.configAddress];
    const held = await Promise.all(holders.map((owner) => tokens(t, owner, mint)));
    return {
      lamports: balances.reduce((sum, value) => sum + value, 0n),
      tokens: held.reduce((sum, value) => sum + value, 0n),
    };
  }

  /** Recovers through the API, possibly interrupted after its first transaction; checks the figure announced. */
  async function recover(route: QuotedRoute, kind: 'rescue' | 'reclaim', interrupted: boolean) {
    const read = await getTransfer(caller, route.id);
    const announced = BigInt(
      kind === 'rescue' ? read.recovery.rescuableLamports : read.recovery.reclaimableLamports,
    );
    const lamportsBefore = await lamports(t, route.source.address);
    const feesBefore = await feesPaidBy(t, route.source.address);
    const confirm = kind === 'rescue' ? confirmRescue : confirmReclaim;
    let bundle = await prepareRecovery(caller, route.id, kind);
    if (interrupted && bundle.txs.length > 1) {
      const first = await broadcast(t, route.source, bundle, { count: 1 });
      assert.equal((await confirm(caller, route.id, first)).statusCode, 200);
      t.clock.advance(1_000);
      bundle = await prepareRecovery(caller, route.id, kind);
    }
    const signatures = await broadcast(t, route.source, bundle);
    assert.equal((await confirm(caller, route.id, signatures)).statusCode, 200);
    assert.equal(
      (await lamports(t, route.source.address)) -
        lamportsBefore +
        (await feesPaidBy(t, route.source.address)) -
        feesBefore,
      announced,
      'the source received exactly the announced figure',
    );
    assert.equal((await getTransfer(caller, route.id)).phase, kind === 'rescue' ? 'rescued' : 'reclaimed');
  }

  /** Sends the first `count` transactions of a deployment bundle, in broadcast order. */
  async function sendPart(route: QuotedRoute, bundle: Bundle, count: number) {
    const ordered = [
      bundle.keeperFundingTx,
      ...bundle.routeInitTxs.map((tx) => tx.base64),
      bundle.orchestratorInitTx,
      ...bundle.sessionInitTxs,
    ].flatMap((base64) => (base64 ? [base64] : []));
    const part = ordered.slice(0, Math.max(1, Math.min(ordered.length - 1, count)));
    for (const base64 of part) {
      const { wire } = await sign(route.source, base64);
      await t.chain.chain.sendTransaction(wire);
    }
    return ordered.length;
  }

  /** Brings a transfer to the scenario's stop; answers what recovers it (null when the service does). */
  async function stopAt(route: QuotedRoute, scenario: Scenario): Promise<'rescue' | 'reclaim' | null> {
    const { stop } = scenario;
    if (stop.kind === 'abandoned') {
      const prepared = await caller.post(`/api/v1/transfers/${route.id}/prepare`);
      assert.equal(prepared.statusCode, 200, prepared.body);
      const bundle = prepared.json().preparedTxs as Bundle;
      const total = [
        bundle.keeperFundingTx,
        ...bundle.routeInitTxs,
        bundle.orchestratorInitTx,
        ...bundle.sessionInitTxs,
      ].filter(Boolean).length;
      const sent = 1 + Math.floor(stop.sent * (total - 2));
      await sendPart(route, bundle, sent);
      t.clock.advance(11 * 60_000);
      await t.reconciler.runOnce();
      const transfer = await getTransfer(caller, route.id);
      if (sent === 1) {
        assert.equal(transfer.phase, 'expired', 'the keeper alone: its lamports went back');
        return null;
      }
      assert.equal(transfer.phase, 'recoverable');
      return 'rescue';
    }
    if (stop.kind === 'flagged') flagged.add(route.recipient);
    await deployRoute(t, caller, route);
    // The route awaits its verdict first.
    await t.keeper.runOnce();
    switch (stop.kind) {
      case 'flagged':
        assert.equal((await getTransfer(caller, route.id)).phase, 'recoverable');
        return 'rescue';
      case 'hop_failed':
        await failLastHop(t, route);
        assert.equal((await getTransfer(caller, route.id)).phase, 'failed');
        return 'rescue';
      case 'keeper_gone':
        await runHops(t, route.id, stop.hopsRun);
        await travelTo(t, (await routeRow(t, route.id)).deadlineAt! + 2n);
        await t.overdue.runOnce();
        assert.equal((await getTransfer(caller, route.id)).phase, 'recoverable');
        return 'rescue';
      case 'settled':
        await runHops(t, route.id, scenario.hops);
        assert.equal((await getTransfer(caller, route.id)).phase, 'settled');
        return 'reclaim';
    }
  }

  test('lamports and tokens are conserved to the base unit, whatever the failure point', async () => {
    await fc.assert(
      fc.asyncProperty(scenarios, async (scenario) => {
        const mint = scenario.native ? (SOL_MINT as Address) : usdc;
        const route = await quoteRoute(t, caller, { hops: scenario.hops, mint, arrivalSeconds: 600 });
        const start = await ledger(route, null);
        const recovery = await stopAt(route, scenario);
        if (recovery) await recover(route, recovery, scenario.interrupted);

        const { keeper } = await routeRow(t, route.id);
        const end = await ledger(route, keeper);
        const fees = (await feesPaidBy(t, route.source.address)) + (await feesPaidBy(t, keeper));
        assert.equal(end.lamports + fees, start.lamports, 'lamports: parties + network fees');
        // On native SOL the tokens are lamports, counted above.
        if (!scenario.native) assert.equal(end.tokens, start.tokens, 'tokens: parties');
        assert.equal(await lamports(t, keeper), 0n, 'the keeper is empty');
        const addresses = await findRouteAddresses({
          source: route.source.address,
          routeId: BigInt(route.id),
          hopCount: scenario.hops,
        });
        for (const address of [
          addresses.route[0],
          addresses.custody[0],
          addresses.orchestrator[0],
          ...addresses.steps.map(([step]) => step),
        ]) {
          assert.equal(await t.chain.chain.getAccount(address), null, `${address} is closed`);
        }
        if (!scenario.native && scenario.stop.kind !== 'settled') {
          assert.equal(
            await tokens(t, route.source.address, mint),
            route.amountRaw * 4n,
            'the source has all its tokens',
          );
        }
      }),
      { numRuns: 14 },
    );
  });
});
