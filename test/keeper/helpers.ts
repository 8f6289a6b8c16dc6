// What keeper tests observe and break: a keeper worker whose chain, screening provider or store a
// test replaces, with its logs and metrics; the route as the chain holds it; the `recovery`
// figures read account by account from the chain; and routes deployed with every hop due, checked
// to have run each hop exactly once.
import assert from 'node:assert/strict';
import type { Address } from '@solana/kit';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import {
  decodeOrchestrator,
  decodeRoute,
  decodeStep,
  type Route,
  type Step,
} from '../../src/chain/router/accounts.ts';
import { findOrchestratorPda, findStepPda } from '../../src/chain/router/pda.ts';
import type { Chain } from '../../src/chain/types.ts';
import type { RouteRecord, Transfer } from '../../src/domain/transfer.ts';
import { priorityFeePolicy } from '../../src/platform/platform.ts';
import { createListScreening } from '../../src/screening/providers.ts';
import type { HopStore } from '../../src/store/hops.ts';
import { type TransferRow, toTransfer } from '../../src/store/transfer-rows.ts';
import type { TransferStore } from '../../src/store/transfers.ts';
import { readRoute } from '../../src/use-cases/route-reads.ts';
import { createRouteScreening, type ScreeningProvider } from '../../src/use-cases/screening.ts';
import { createKeeperWorker } from '../../src/workers/keeper.ts';
import { type Caller, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { deployRoute, type QuotedRoute, quoteRoute, tokenBalance } from '../helpers/route.ts';

/**
 * A keeper worker over a test app's database, store and platform, built as the service builds it,
 * with the chain, screening provider, hop store or transfer store a test gives; it keeps its log lines and
 * metrics for the test to read.
 */
export function keeperWorker(
  t: TestApp,
  options: {
    chain?: Chain;
    screening?: ScreeningProvider;
    store?: HopStore;
    transfers?: Pick<TransferStore, 'markRecoverable'>;
    concurrency?: number;
    /** The longest it sleeps between rounds (default: the worker's). */
    maxSleepMs?: number;
    /** Where it hears of the chain's clock jumps (default: nowhere). */
    onClockJump?: (listener: () => void) => () => void;
    /** The worker process it runs in (default: the test app's). */
    worker?: string;
  } = {},
) {
  const logs: { msg: string; [key: string]: unknown }[] = [];
  const metrics = new Registry();
  const chain = options.chain ?? t.chain.chain;
  const store = options.store ?? t.store.hops;
  const transfers = options.transfers ?? t.store.transfers;
  const worker = createKeeperWorker({
    worker: options.worker ?? t.worker,
    db: t.database.db,
    listen: t.database.db,
    chain,
    hops: store,
    transfers,
    programAddress: t.platform.programAddress,
    priorityFees: priorityFeePolicy(t.platform, 0n),
    screen: createRouteScreening({
      provider: options.screening ?? createListScreening([]),
      db: t.database.db,
      chain,
      platform: t.platform,
      transfers,
      clock: t.clock,
    }),
    clock: t.clock,
    pollMs: 5,
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
    ...(options.maxSleepMs ? { maxSleepMs: options.maxSleepMs } : {}),
    ...(options.onClockJump ? { onClockJump: options.onClockJump } : {}),
    metrics,
    log: pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line)) }),
  });
  return {
    ...worker,
    logs,
    /** The keeper_hops_total counter for one outcome (`landed`, `retried`, `failed`). */
    async hops(outcome: 'landed' | 'retried' | 'failed'): Promise<number> {
      const metric = await metrics.getSingleMetric('keeper_hops_total')!.get();
      return metric.values.find((value) => value.labels.outcome === outcome)?.value ?? 0;
    },
  };
}

/** The transfer as the API shows it. */
export async function transferOf(caller: Caller, id: number) {
  const response = await caller.get(`/api/v1/transfers/${id}`);
  assert.equal(response.statusCode, 200, response.body);
  return response.json();
}

/** The chain's unix time. */
export const chainNow = async (t: TestApp): Promise<bigint> => (await t.chain.chain.getClock()).unixTimestamp;

/** Moves the chain's clock to `unix` seconds. */
export async function travelTo(t: TestApp, unix: bigint): Promise<void> {
  await t.chain.cheats.timeTravel({ absoluteTimestamp: Number(unix) * 1000 });
}

/** A wallet's lamports. */
export const lamports = async (t: TestApp, address: Address) =>
  BigInt(await t.chain.chain.getBalance(address));

/** A transfer's route as the chain holds it: its address, the route account and its step states. */
export async function routeOnChain(
  t: TestApp,
  id: number,
): Promise<{ address: Address; lamports: bigint; route: Route; steps: Step[] }> {
  const { rows } = await t.database.db.query<{ route_address: Address }>(
    'SELECT route_address FROM transfers WHERE id = $1',
    [id],
  );
  const address = rows[0]!.route_address;
  const account = await t.chain.chain.getAccount(address);
  assert.ok(account, `route ${address} is on chain`);
  const route = decodeRoute(account.data);
  const steps: Step[] = [];
  for (let index = 0; index < route.hopCount; index++) {
    const [step] = await findStepPda(address, index, t.platform.programAddress);
    steps.push(decodeStep((await t.chain.chain.getAccount(step))!.data));
  }
  return { address, lamports: BigInt(account.lamports), route, steps };
}

/**
 * What the source could rescue from a route, read account by account from the chain: the route
 * account, its step states and token accounts (a wrapped-SOL account's lamports with its wrapped
 * amount: the rescue delivers it as SOL), the orchestrator config when this is the source's only open route, and the
 * keeper's lamports; in the API's shape, sorted by kind and lamports.
 */
export async function rescuableOnChain(t: TestApp, id: number) {
  const { address, lamports: routeLamports, route } = await routeOnChain(t, id);
  const accounts: { kind: string; lamports: number }[] = [
    { kind: 'route_pda', lamports: Number(routeLamports) },
  ];
  for (let index = 0; index < route.hopCount; index++) {
    const [step] = await findStepPda(address, index, t.platform.programAddress);
    accounts.push({ kind: 'step_state', lamports: Number(await lamports(t, step)) });
  }
  for (const holder of [route.custody, ...route.hops]) {
    const token = await t.chain.chain.getTokenAccount(holder);
    if (!token) continue;
    const held = await lamports(t, holder);
    accounts.push({ kind: 'ata', lamports: Number(held) });
  }
  const [orchestrator] = await findOrchestratorPda(route.source, t.platform.programAddress);
  const { openRoutes } = decodeOrchestrator((await t.chain.chain.getAccount(orchestrator))!.data);
  if (openRoutes === 1) {
    accounts.push({ kind: 'orchestrator_config', lamports: Number(await lamports(t, orchestrator)) });
  }
  const keeper = await lamports(t, route.keeper);
  if (keeper > 0n) accounts.push({ kind: 'keeper', lamports: Number(keeper) });
  return {
    accounts: sortAccounts(accounts),
    lamports: accounts.reduce((total, account) => total + account.lamports, 0),
  };
}

/** Recovery accounts in a stable order, to compare lists whose order the API does not promise. */
export const sortAccounts = (accounts: readonly { kind: string; lamports: number }[]) =>
  [...accounts].sort((a, b) => a.kind.localeCompare(b.kind) || a.lamports - b.lamports);

/**
 * Deploys a quoted route and moves the chain's clock to its first hop's due time (`interval`
 * seconds after the chain's time before the deployment): the route's address, keeper and that time.
 */
export async function deployWithFirstHopDue(
  t: TestApp,
  caller: Caller,
  route: QuotedRoute,
  interval: bigint,
) {
  const t0 = await chainNow(t);
  await deployRoute(t, caller, route);
  await travelTo(t, t0 + interval);
  const { address, route: onChain } = await routeOnChain(t, route.id);
  return { t0, address, keeper: onChain.keeper };
}

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

/** The transfer as the store holds it. */
async function storedTransfer(t: TestApp, id: number): Promise<Transfer & { route: RouteRecord }> {
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
    const schedule = (await storedTransfer(t, route.id)).route.schedule!;
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
  const transfer = await storedTransfer(t, route.id);
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
