import { loadavg } from 'node:os';
import type { Address } from '@solana/kit';
import { ROUTER_PROGRAM_ADDRESS } from '../src/chain/router/program.ts';
import { ownCpuMs, processCpuMs } from './lib/cpu.ts';
import { type BaselineRoute, createKeeperBaseline } from './lib/keeper-baseline.ts';
import { startKeeperBench, type WorkerProcess } from './lib/keeper-service.ts';
import { markdownTable } from './lib/load.ts';

/**
 * Keeper throughput on the embedded chain with every hop due: routes deployed through the API (as
 * an integrator deploys them), the chain's clock moved past their last hop, then hops per second
 * as 1 and 2 worker processes (`npm run worker`, on the same PostgreSQL, pointed at the service's
 * embedded chain with RPC_URL) carry them all to `completed`, beside a baseline in the same run:
 * the same ExecuteStep transactions built, signed with the routes' keeper keys, sent and confirmed
 * directly with `@solana/kit` against the same endpoint, without the store
 * (bench/lib/keeper-baseline.ts), as many routes at a time as one worker advances.
 *
 * Every scenario runs on routes of its own, freshly deployed. The two worker processes run for the
 * whole bench and are warmed up first (untimed routes); one is paused (SIGSTOP) while the other
 * runs alone, both while the baseline runs. The time runs from the clock's move, the workers woken
 * as a takeover wakes them (NOTIFY), to the last completion the database records. Scenarios take
 * turns within a round; each ratio is the median of its per-round ratios. Beside the rates, the
 * CPU each part costs per hop (Linux's accounting in /proc): the service process (the chain
 * answering), the workers or the baseline's client, and the PostgreSQL backends serving the
 * workers. The machine's other load moves the rates much more than the CPU figures.
 *
 *   npm run bench -- keeper    (BENCH_ROUNDS, default 3; BENCH_ROUTES per scenario and round,
 *                               default 100; BENCH_HOPS per route, default 3; BENCH_WARMUP_ROUTES,
 *                               default 50; BENCH_CPU_PROF_DIR: write the workers' CPU profiles)
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ROUTES = Number(process.env.BENCH_ROUTES ?? 100);
const HOPS = Number(process.env.BENCH_HOPS ?? 3);
/** Routes one keeper worker advances at once (createKeeperWorker's default). */
const WORKER_CONCURRENCY = 16;
/** Routes carried untimed first, so that the figures are those of warm processes. */
const WARMUP_ROUTES = Number(process.env.BENCH_WARMUP_ROUTES ?? 50);
const TARGET_ONE_WORKER = 0.5;
const TARGET_TWO_WORKERS = 1.6;

interface Measured {
  hopsPerSecond: number;
  serviceCpuMsPerHop: number;
  clientCpuMsPerHop: number;
  databaseCpuMsPerHop: number;
}

const bench = await startKeeperBench();
try {
  const baseline = createKeeperBaseline(bench.rpcUrl, ROUTER_PROGRAM_ADDRESS);
  const profile = process.env.BENCH_CPU_PROF_DIR;
  // Two worker processes for the whole run, warmed up (a fresh process compiles as it goes);
  // the second is paused (SIGSTOP) while one runs alone, both while the baseline runs.
  const workers = await bench.startWorkers(
    2,
    profile ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profile}` } : {},
  );

  /** Fresh routes, their hops 10 minutes apart: none is due until the clock moves. */
  async function deploy(count = ROUTES) {
    const routes = await bench.deploy({ count, hops: HOPS, arrivalSeconds: 600 * HOPS });
    return { ids: routes.map((route) => route.id), lastDue: Math.max(...routes.map((r) => r.arrivalAt)) };
  }

  /** The clock moved past every hop of `routes`, the workers woken: how fast they complete them. */
  async function carry(
    routes: { ids: number[]; lastDue: number },
    running: WorkerProcess[],
  ): Promise<Measured> {
    const serviceBefore = processCpuMs(bench.service.pid);
    const workersBefore = running.map((worker) => processCpuMs(worker.pid));
    const databaseBefore = await bench.workerBackendsCpuMs();
    const started = Date.now();
    await bench.travelTo((routes.lastDue + 1) * 1000);
    await bench.wakeKeepers();
    const last = await bench.waitCompleted(routes.ids, 600_000);
    const hops = routes.ids.length * HOPS;
    let databaseCpu = 0;
    for (const [pid, cpu] of await bench.workerBackendsCpuMs())
      databaseCpu += cpu - (databaseBefore.get(pid) ?? 0);
    return {
      databaseCpuMsPerHop: databaseCpu / hops,
      hopsPerSecond: hops / ((last.getTime() - started) / 1000),
      serviceCpuMsPerHop: (processCpuMs(bench.service.pid) - serviceBefore) / hops,
      clientCpuMsPerHop:
        running.reduce((sum, worker, i) => sum + processCpuMs(worker.pid) - workersBefore[i]!, 0) / hops,
    };
  }

  async function runBaseline(count = ROUTES): Promise<Measured> {
    const { ids, lastDue } = await deploy(count);
    // Taken out of the keeper's hands for good: the baseline runs their hops, not a worker.
    await bench.database.db.query('UPDATE transfers SET keeper_due_at = NULL WHERE id = ANY($1)', [ids]);
    const { rows } = await bench.database.db.query<{
      id: string;
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
        keeperPrivateKey: (await bench.store.deployments.keeperPrivateKey(Number(row.id)))!,
        microLamportsPerCu: BigInt(row.hop_priority_micro_lamports),
      })),
    );
    for (const worker of workers) worker.pause();
    try {
      await bench.travelTo((lastDue + 1) * 1000);
      const serviceBefore = processCpuMs(bench.service.pid);
      const ownBefore = ownCpuMs();
      const started = performance.now();
      await baseline(routes, WORKER_CONCURRENCY);
      const seconds = (performance.now() - started) / 1000;
      const hops = count * HOPS;
      return {
        databaseCpuMsPerHop: 0,
        hopsPerSecond: hops / seconds,
        serviceCpuMsPerHop: (processCpuMs(bench.service.pid) - serviceBefore) / hops,
        clientCpuMsPerHop: (ownCpuMs() - ownBefore) / hops,
      };
    } finally {
      for (const worker of workers) worker.resume();
    }
  }

  async function runWorkers(count: number): Promise<Measured> {
    const routes = await deploy();
    const paused = workers.slice(count);
    for (const worker of paused) worker.pause();
    try {
      return await carry(routes, workers.slice(0, count));
    } finally {
      for (const worker of paused) worker.resume();
    }
  }

  // Warm-up, untimed: both workers carry routes, and the baseline runs once.
  await carry(await deploy(WARMUP_ROUTES), workers);
  await runBaseline(WARMUP_ROUTES);
  const loadBefore = loadavg()[0]!;

  const scenarios = [
    { name: 'baseline (kit: build, sign, send, confirm; no store)', run: () => runBaseline() },
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
  const cpu = (name: string) => {
    const measured = results.get(name)!;
    const service = mean(measured.map((m) => m.serviceCpuMsPerHop));
    const client = mean(measured.map((m) => m.clientCpuMsPerHop));
    const database = mean(measured.map((m) => m.databaseCpuMsPerHop));
    return { service, client, database, total: service + client + database };
  };
  const rows = scenarios.map(({ name }) => {
    const rates = results.get(name)!.map((m) => m.hopsPerSecond);
    const { service, client, database, total } = cpu(name);
    return [
      name,
      median(rates).toFixed(1),
      range(rates, 1),
      service.toFixed(1),
      client.toFixed(1),
      database.toFixed(1),
      total.toFixed(1),
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
  ratios.push([
    'CPU per hop, all processes: baseline / 1 worker',
    `${(cpu(scenarios[0]!.name).total / cpu(scenarios[1]!.name).total).toFixed(2)}x`,
    '',
    '(reference)',
  ]);
  process.stdout.write(
    `${ROUTES} routes of ${HOPS} hops per scenario and round, ${ROUNDS} rounds, every hop due; the machine's load average (1 min) ${loadBefore.toFixed(1)} before the rounds, ${loadavg()[0]!.toFixed(1)} after.\n\n${markdownTable(
      [
        'scenario',
        'hops/s (median round)',
        'range',
        'CPU ms per hop: service (chain)',
        'CPU ms per hop: workers or baseline client',
        'CPU ms per hop: PostgreSQL',
        'CPU ms per hop: all',
        'hops',
      ],
      rows,
    )}\n\n${markdownTable(['ratio (median of per-round ratios)', 'measured', 'range', 'target'], ratios)}\n`,
  );
} finally {
  await bench.close();
}
