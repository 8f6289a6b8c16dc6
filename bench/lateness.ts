import { loadavg } from 'node:os';
import { BAD_DAY, type FaultProxy, startFaultProxy } from '@transfer-router/rpc-faults';
import { processCpuMs } from './lib/cpu.ts';
import { startKeeperBench } from './lib/keeper-service.ts';
import { markdownTable } from './lib/load.ts';

/**
 * Hop lateness as routes run on their real schedule: from a hop's due time on the chain's clock to
 * the keeper recording it `confirmed` (its `transfer.hop_complete` event), p50 and p99, and the
 * keeper's CPU per hop, with two worker processes (`npm run worker`) reading and sending straight to
 * the chain, then through the fault-injecting proxy on a bad day (packages/rpc-faults, `BAD_DAY`).
 * The chain runs in this process on the system clock, never moved, so its time is the wall's.
 * Each scenario deploys its routes through the API (as an integrator does) while its workers run,
 * and waits for them all to complete; the hops fall due as the routes' schedules say.
 *
 *   npm run bench -- lateness   (BENCH_LATENESS_ROUTES per scenario, default 30; BENCH_LATENESS_HOPS,
 *                                default 4; arrival the shortest allowed, 15 s between hops;
 *                                BENCH_FAULTS_SEED)
 */
const ROUTES = Number(process.env.BENCH_LATENESS_ROUTES ?? 30);
const HOPS = Number(process.env.BENCH_LATENESS_HOPS ?? 4);
const ARRIVAL_SECONDS = Math.max(60, 15 * HOPS);

interface Measured {
  hops: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  keeperCpuMsPerHop: number;
  databaseCpuMsPerHop: number;
}

const bench = await startKeeperBench({ chainHere: true });
let proxy: FaultProxy | undefined;
try {
  /** Routes deployed and carried by two workers reading the chain at `rpcUrl`. */
  async function scenario(rpcUrl: string): Promise<Measured> {
    const workers = await bench.startWorkers(2, { RPC_URL: rpcUrl });
    try {
      const workersBefore = workers.map((worker) => processCpuMs(worker.pid));
      const databaseBefore = await bench.workerBackendsCpuMs();
      const routes = await bench.deploy({ count: ROUTES, hops: HOPS, arrivalSeconds: ARRIVAL_SECONDS });
      const ids = routes.map((route) => route.id);
      await bench.waitCompleted(ids, 600_000);
      const keeperCpu = workers.reduce(
        (sum, worker, i) => sum + processCpuMs(worker.pid) - workersBefore[i]!,
        0,
      );
      let databaseCpu = 0;
      for (const [pid, cpu] of await bench.workerBackendsCpuMs())
        databaseCpu += cpu - (databaseBefore.get(pid) ?? 0);
      const { rows } = await bench.database.db.query<{ ms: number }>(
        `SELECT (extract(epoch FROM e.created_at) * 1000
                 - (t.first_release_at + h.step * t.interval_seconds) * 1000)::float8 AS ms
           FROM events e JOIN transfers t ON t.id = e.transfer_id,
                LATERAL (SELECT (e.payload -> 'data' -> 'transfer' -> 'progress' ->> 'hopsCompleted')::int - 1 AS step) h
          WHERE e.transfer_id = ANY($1) AND e.type = 'transfer.hop_complete'
          ORDER BY ms`,
        [ids],
      );
      const lateness = rows.map((row) => row.ms);
      const at = (share: number) =>
        lateness[Math.min(lateness.length - 1, Math.floor(share * lateness.length))]!;
      return {
        hops: lateness.length,
        p50Ms: at(0.5),
        p99Ms: at(0.99),
        maxMs: lateness.at(-1)!,
        keeperCpuMsPerHop: keeperCpu / lateness.length,
        databaseCpuMsPerHop: databaseCpu / lateness.length,
      };
    } finally {
      for (const worker of workers) await worker.stop();
    }
  }

  const loadBefore = loadavg()[0]!;
  const direct = await scenario(bench.rpcUrl);
  proxy = await startFaultProxy({
    upstream: bench.rpcUrl,
    faults: { ...BAD_DAY, seed: process.env.BENCH_FAULTS_SEED ?? 'bench' },
  });
  const faulty = await scenario(proxy.url);
  const row = (name: string, m: Measured) => [
    name,
    m.hops,
    (m.p50Ms / 1000).toFixed(2),
    (m.p99Ms / 1000).toFixed(2),
    (m.maxMs / 1000).toFixed(2),
    m.keeperCpuMsPerHop.toFixed(1),
    m.databaseCpuMsPerHop.toFixed(1),
  ];
  process.stdout.write(
    `${ROUTES} routes of ${HOPS} hops per scenario (${ARRIVAL_SECONDS / HOPS} s between hops), two worker processes; the machine's load average (1 min) ${loadBefore.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after.\n\n${markdownTable(
      [
        'RPC endpoint',
        'hops',
        'lateness p50 (s)',
        'p99 (s)',
        'max (s)',
        'keeper CPU ms per hop',
        'PostgreSQL CPU ms per hop',
      ],
      [row('the chain, directly', direct), row('through the fault proxy, BAD_DAY', faulty)],
    )}\n\nFaults the proxy injected: ${JSON.stringify(proxy.stats())}\n`,
  );
} finally {
  await proxy?.close();
  await bench.close();
}
