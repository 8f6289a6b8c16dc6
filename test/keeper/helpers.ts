// What keeper tests observe and break: a keeper worker whose chain, screening provider or store a
// test replaces, with its logs and metrics; the route as the chain holds it; and the `recovery`
// figures read account by account from the chain.
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
import { createRouteScreening, type ScreeningProvider } from '../../src/route/screening.ts';
import { createListScreening } from '../../src/screening/providers.ts';
import type { KeeperWorkStore } from '../../src/store/keeper-work.ts';
import { createKeeperWorker } from '../../src/workers/keeper.ts';
import type { Caller, TestApp } from '../helpers/app.ts';

/**
 * A keeper worker over a test app's database, store and platform, built as the service builds it,
 * with the chain, screening provider or keeper store a test gives; it keeps its log lines and
 * metrics for the test to read.
 */
export function keeperWorker(
  t: TestApp,
  options: { chain?: Chain; screening?: ScreeningProvider; store?: KeeperWorkStore } = {},
) {
  const logs: { msg: string; [key: string]: unknown }[] = [];
  const metrics = new Registry();
  const chain = options.chain ?? t.chain.chain;
  const store = options.store ?? t.store.keeper;
  const worker = createKeeperWorker({
    db: t.database.db,
    listen: t.database.db,
    chain,
    keeper: store,
    routes: t.store.routes,
    programAddress: t.platform.programAddress,
    screen: createRouteScreening({
      provider: options.screening ?? createListScreening([]),
      db: t.database.db,
      chain,
      platform: t.platform,
      keeper: store,
      clock: t.clock,
    }),
    clock: t.clock,
    pollMs: 5,
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
 * account, its step states and token accounts (a wrapped-SOL account's lamports without its
 * wrapped amount), the orchestrator config when this is the source's only open route, and the
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
    accounts.push({ kind: 'ata', lamports: Number(token.isNative === null ? held : held - token.amount) });
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
