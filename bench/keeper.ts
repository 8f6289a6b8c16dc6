import { setTimeout as delay } from 'node:timers/promises';
import type { Address } from '@solana/kit';
import { ROUTER_PROGRAM_ADDRESS } from '../src/chain/router/program.ts';
import { ownCpuMs, processCpuMs } from './lib/cpu.ts';
import { type BaselineRoute, createKeeperBaseline } from './lib/keeper-baseline.ts';
import { type DeployedRoute, startKeeperBench } from './lib/keeper-service.ts';
import { markdownTable } from './lib/load.ts';

/**
 * Keeper throughput on the embedded chain with every hop due: routes deployed through the API (as
 * an integrator deploys them), the chain's clock moved past their last hop, then hops per second
 * as 1 and 2 worker processes (`npm run worker`, on the same PostgreSQL, pointed at the service's
 * embedded chain with RPC_URL) carry them all to `completed`, beside a baseline in the same run:
 * the same ExecuteStep transactions built, signed with the routes' keeper keys, sent and confirmed
 * directly with `@solana/kit` against the same endpoint, without the store
 * (bench/lib/keeper-baseline.ts), as many routes at a time as one worker advances. Every scenario
 * runs on routes of its own, freshly deployed; the workers are started before the clock moves and
 * woken as a takeover wakes them (NOTIFY), and the time runs from then to the last completion the
 * database records. Scenarios take turns within a round; each ratio is the median of its
 * per-round ratios. Beside the rates, the CPU each side costs per hop (Linux's accounting in
 * /proc): the service process's (the chain answering), and the workers' or the baseline client's.
 *
 *   npm run bench -- keeper    (BENCH_ROUNDS, default 3; BENCH_ROUTES per scenario and round,
 *                               default 100; BENCH_HOPS per route, default 3;
 *                               BENCH_CPU_PROF_DIR: write the workers' CPU profiles there)
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ROUTES = Number(process.env.BENCH_ROUTES ?? 100);
const HOPS = Number(process.env.BENCH_HOPS ?? 3);
/** Routes one keeper worker advances at once (createKeeperWorker's default). */
const WORKER_CONCURRENCY = 16;
const TARGET_ONE_WORKER = 0.5;
const TARGET_TWO_WORKERS = 1.6;

interface Measured {
  hopsPerSecond: number;
  serviceCpuMsPerHop: number;
  clientCpuMsPerHop: number;
}

const bench = await startKeeperBench();
try {
  const baseline = createKeeperBaseline(bench.rpcUrl, ROUTER_PROGRAM_ADDRESS);

  /** Fresh routes, not yet due (their hops 10 minutes apart), kept from the keeper until run. */
  async function deployParked(): Promise<{ routes: DeployedRoute[]; lastDue: bigint; ids: number[] }> {
    const routes = await bench.deploy({ count: ROUTES, hops: HOPS, arrivalSeconds: 600 * HOPS });
    const ids = routes.map((route) => route.id);
    return { routes, ids, lastDue: routes.reduce((max, r) => (r.arrivalAt > max ? r.arrivalAt : max), 0n) };
  }

  async function runBaseline(): Promise<Measured> {
    const { ids, lastDue } = await deployParked();
    // Taken out of the keeper's hands for good: the baseline runs their hops, not a worker.
    await bench.database.db.query('UPDATE transfers SET keeper_due_at = NULL WHERE id = ANY($1)', [ids]);
    const { rows } = await bench.database.db.query<{
      id: number;
      route_address: Address;
      hops: number;
      hop_priority_micro_lamports: string;
    }>('SELECT id, route_address, hops, hop_priority_micro_lamports FROM transfers WHERE id = ANY($1)', [
      ids,
    ]);
    const routes: BaselineRoute[] = await Promise.all(
      rows.map(async (row) => ({
        address: row.route_address,
        hops: row.hops,
        keeperPrivateKey: (await bench.store.routes.keeperPrivateKey(row.id))!,
        microLamportsPerCu: BigInt(row.hop_priority_micro_lamports),
      })),
    );
    await bench.travelTo(lastDue + 1n);
    const serviceBefore = processCpuMs(bench.service.pid);
    const ownBefore = ownCpuMs();
    const started = performance.now();
    await baseline(routes, WORKER_CONCURRENCY);
    const seconds = (performance.now() - started) / 1000;
    const hops = ROUTES * HOPS;
    return {
      hopsPerSecond: hops / seconds,
      serviceCpuMsPerHop: (processCpuMs(bench.service.pid) - serviceBefore) / hops,
      clientCpuMsPerHop: (ownCpuMs() - ownBefore) / hops,
    };
  }

  async function runWorkers(count: number): Promise<Measured> {
    const { ids, lastDue } = await deployParked();
    const profile = process.env.BENCH_CPU_PROF_DIR;
    const workers = await bench.startWorkers(
      count,
      profile ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profile}` } : {},
    );
    try {
      await bench.travelTo(lastDue + 1n);
      const serviceBefore = processCpuMs(bench.service.pid);
      const workersBefore = workers.map((worker) => processCpuMs(worker.pid));
      const started = Date.now();
      await bench.wakeKeepers();
      for (;;) {
        const { rows } = await bench.database.db.query<{ done: number; last: Date | null }>(
          `SELECT count(*)::int AS done, max(completed_at) AS last FROM transfers
            WHERE id = ANY($1) AND status = 'completed'`,
          [ids],
        );
        if (rows[0]!.done === ids.length) {
          const hops = ROUTES * HOPS;
          const workerCpu = workers.reduce(
            (sum, worker, i) => sum + processCpuMs(worker.pid) - workersBefore[i]!,
            0,
          );
          return {
            hopsPerSecond: hops / ((rows[0]!.last!.getTime() - started) / 1000),
            serviceCpuMsPerHop: (processCpuMs(bench.service.pid) - serviceBefore) / hops,
            clientCpuMsPerHop: workerCpu / hops,
          };
        }
        const { rows: failed } = await bench.database.db.query<{ id: number }>(
          `SELECT id FROM transfers WHERE id = ANY($1) AND status = 'failed'`,
          [ids],
        );
        if (failed.length > 0) throw new Error(`transfers failed: ${failed.map((row) => row.id).join(', ')}`);
        await delay(100);
      }
    } finally {
      for (const worker of workers) await worker.stop();
    }
  }

  const scenarios = [
    { name: 'baseline (kit: build, sign, send, confirm; no store)', run: runBaseline },
    { name: 'keeper, 1 worker process', run: () => runWorkers(1) },
    { name: 'keeper, 2 worker processes', run: () => runWorkers(2) },
  ];
  const results = new Map(scenarios.map((scenario) => [scenario.name, [] as Measured[]]));
  for (let round = 0; round < ROUNDS; round++) {
    // Each round starts with another scenario, so that none always runs on the freshest state.
    for (let index = 0; index < scenarios.length; index++) {
      const scenario = scenarios[(round + index) % scenarios.length]!;
      const measured = await scenario.run();
      results.get(scenario.name)!.push(measured);
      process.stderr.write(
        `round ${round + 1}: ${scenario.name}: ${measured.hopsPerSecond.toFixed(1)} hops/s\n`,
      );
    }
  }

  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const range = (values: number[], digits: number) =>
    `${Math.min(...values).toFixed(digits)}-${Math.max(...values).toFixed(digits)}`;
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  const rows = scenarios.map(({ name }) => {
    const measured = results.get(name)!;
    const rates = measured.map((m) => m.hopsPerSecond);
    return [
      name,
      median(rates).toFixed(1),
      range(rates, 1),
      mean(measured.map((m) => m.serviceCpuMsPerHop)).toFixed(1),
      mean(measured.map((m) => m.clientCpuMsPerHop)).toFixed(1),
      ROUTES * HOPS * ROUNDS,
    ];
  });
  const rates = (index: number) => results.get(scenarios[index]!.name)!.map((m) => m.hopsPerSecond);
  const ratio = (over: number, under: number) =>
    rates(over).map((value, round) => value / rates(under)[round]!);
  const ratios = [
    ['1 worker / baseline', ratio(1, 0), `≥ ${TARGET_ONE_WORKER}x`],
    ['2 workers / 1 worker', ratio(2, 1), `≥ ${TARGET_TWO_WORKERS}x`],
  ].map(([name, values, target]) => [
    name as string,
    `${median(values as number[]).toFixed(2)}x`,
    range(values as number[], 2),
    target as string,
  ]);
  process.stdout.write(
    `${ROUTES} routes of ${HOPS} hops per scenario and round, ${ROUNDS} rounds, every hop due.\n\n${markdownTable(
      [
        'scenario',
        'hops/s (median round)',
        'range',
        'CPU ms per hop: service (chain)',
        'CPU ms per hop: workers or baseline client',
        'hops',
      ],
      rows,
    )}\n\n${markdownTable(['ratio (median of per-round ratios)', 'measured', 'range', 'target'], ratios)}\n`,
  );
} finally {
  await bench.close();
}
