import assert from 'node:assert/strict';
import type { Address } from '@solana/kit';
import type { RouteRecord, Transfer } from '../../src/domain/transfer.ts';
import { readRoute } from '../../src/route/route-reads.ts';
import { type TransferRow, toTransfer } from '../../src/store/transfer-rows.ts';
import { type Caller, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { deployRoute, type QuotedRoute, quoteRoute, tokenBalance } from '../helpers/route.ts';

/** A deployed route the keeper took over, with what was true before its hops. */
export interface DeployedRoute extends QuotedRoute {
  hops: number;
  recipientBefore: bigint;
  /** How many events the transfer had when the keeper took it over. */
  eventsBefore: number;
}

/** The recipient's balance in the route's currency: lamports on a native route, else tokens. */
async function recipientBalance(t: TestApp, route: QuotedRoute): Promise<bigint> {
  return route.mint === SOL_MINT
    ? BigInt(await t.chain.chain.getBalance(route.recipient))
    : await tokenBalance(t, route.recipient, route.mint);
}

export async function transferOf(t: TestApp, id: number): Promise<Transfer & { route: RouteRecord }> {
  const { rows } = await t.database.db.query<TransferRow>('SELECT * FROM transfers WHERE id = $1', [id]);
  return toTransfer(rows[0]!) as Transfer & { route: RouteRecord };
}

async function eventTypes(t: TestApp, id: number): Promise<string[]> {
  const { rows } = await t.database.db.query<{ type: string }>(
    'SELECT type FROM events WHERE transfer_id = $1 ORDER BY sequence',
    [id],
  );
  return rows.map((row) => row.type);
}

/**
 * Quotes and deploys routes (`mints[i]` for the i-th), then moves the chain's clock to the last
 * hop's due time of all of them, so that every hop of every route is due.
 */
export async function deployDueRoutes(
  t: TestApp,
  caller: Caller,
  mints: readonly Address[],
  hops = 3,
): Promise<DeployedRoute[]> {
  const routes: DeployedRoute[] = [];
  for (const mint of mints) {
    const quoted = await quoteRoute(t, caller, { hops, mint, arrivalSeconds: 600 });
    const recipientBefore = await recipientBalance(t, quoted);
    await deployRoute(t, caller, quoted);
    routes.push({ ...quoted, hops, recipientBefore, eventsBefore: (await eventTypes(t, quoted.id)).length });
  }
  let last = 0n;
  for (const route of routes) {
    const schedule = (await transferOf(t, route.id)).route.schedule!;
    const due = schedule.firstReleaseAt + BigInt(hops - 1) * BigInt(schedule.intervalSecs);
    if (due > last) last = due;
  }
  await t.chain.cheats.timeTravel({ absoluteTimestamp: Number(last) * 1000 });
  return routes;
}

/** Whether every route's transfer is completed. */
export async function allCompleted(t: TestApp, routes: readonly DeployedRoute[]): Promise<boolean> {
  const { rows } = await t.database.db.query<{ done: string }>(
    `SELECT count(*) AS done FROM transfers WHERE id = ANY($1) AND status = 'completed'`,
    [routes.map((route) => route.id)],
  );
  return Number(rows[0]!.done) === routes.length;
}

/**
 * Checks that the route ran every hop exactly once, on chain and in the store: the route settled
 * with every step executed; the keeper paid exactly one transaction per hop that touched the route
 * (none failed, none repeated), and they are the signatures recorded; the recipient received the
 * net amount exactly; the outbox holds one `hop_complete` per hop, then one `completed` and one
 * `phase_changed`, and nothing else since the takeover.
 */
export async function assertCarriedOnce(t: TestApp, route: DeployedRoute) {
  const transfer = await transferOf(t, route.id);
  assert.equal(transfer.status, 'completed');
  assert.equal(transfer.phase, 'settled');
  assert.equal(transfer.hopsCompleted, route.hops);
  const recorded = transfer.signatures.hops;
  assert.equal(new Set(recorded).size, route.hops, 'one distinct signature recorded per hop');

  const snapshot = await readRoute(t.chain.chain, t.platform.programAddress, transfer);
  assert.equal(snapshot.route?.data.status, 'settled');
  assert.equal(snapshot.route?.data.nextStep, route.hops);
  assert.deepEqual(
    snapshot.steps.map((step) => step.data.status),
    Array.from({ length: route.hops }, () => 'executed'),
  );

  const keeperPaid: { signature: string; failed: boolean }[] = [];
  for (const record of t.chain.ledger.signaturesForAddress(transfer.route.address, { limit: 1000 })) {
    const landed = await t.chain.chain.getTransaction(record.signature as never);
    if (landed?.accountKeys[0] === transfer.route.keeper)
      keeperPaid.push({ signature: record.signature, failed: record.err !== null });
  }
  assert.deepEqual(
    keeperPaid.filter((tx) => tx.failed),
    [],
    'no hop transaction of the keeper failed on chain',
  );
  assert.deepEqual(
    keeperPaid.map((tx) => tx.signature).sort(),
    [...recorded].sort(),
    'the keeper’s transactions on the route are exactly the recorded hops',
  );

  assert.equal(
    (await recipientBalance(t, route)) - route.recipientBefore,
    BigInt(route.estimate.tokens.netDeliveredRaw),
    'the recipient received the net amount exactly',
  );

  const { rows } = await t.database.db.query<{ type: string; sequence: number; hops: number }>(
    `SELECT type, sequence, (payload -> 'data' -> 'transfer' -> 'progress' ->> 'hopsCompleted')::int AS hops
       FROM events WHERE transfer_id = $1 ORDER BY sequence`,
    [route.id],
  );
  const since = rows.slice(route.eventsBefore);
  assert.deepEqual(
    since.map((row) => row.type),
    [
      ...Array.from({ length: route.hops }, () => 'transfer.hop_complete'),
      'transfer.completed',
      'transfer.phase_changed',
    ],
    'one event per hop, then settlement, each once',
  );
  assert.deepEqual(
    since.slice(0, route.hops).map((row) => row.hops),
    Array.from({ length: route.hops }, (_, i) => i + 1),
    'each hop_complete carries its own hop',
  );
  assert.deepEqual(
    rows.map((row) => row.sequence),
    Array.from({ length: rows.length }, (_, i) => i + 1),
    'event sequences without gaps',
  );
}
