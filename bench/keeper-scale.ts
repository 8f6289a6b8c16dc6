import { setTimeout as delay } from 'node:timers/promises';
import type { Signature } from '@solana/kit';
import { type DeployedRoute, startKeeperBench } from './lib/keeper-service.ts';
import { markdownTable } from './lib/load.ts';

/**
 * The keeper at scale, in real time: 1,000 transfers of 3 hops with the shortest arrival the API
 * allows for them (60 s), all launched at once and deployed through the API as an integrator
 * deploys them (create, prepare, the source's wallet signs and broadcasts, confirm-broadcast
 * twice), as fast as the service takes them, while worker processes (`npm run worker`, on the same
 * PostgreSQL, pointed at the service's embedded chain with RPC_URL) carry them; the chain's clock
 * follows the wall clock, nothing moves it. Every transfer must complete. Reported: how late each
 * arrived, the chain's time of the block its last hop landed in against its target arrival (its
 * last hop's due time, prepare's chain time plus 60 s), at p50, p99 and worst; how fast the
 * transfers were deployed and how many were in flight at most.
 *
 *   npm run bench -- keeper-scale    (BENCH_TRANSFERS, default 1000; BENCH_WORKERS, default 2;
 *                                     BENCH_DEPLOY_CONCURRENCY deployments at a time, default 8)
 */
const TRANSFERS = Number(process.env.BENCH_TRANSFERS ?? 1000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const DEPLOY_CONCURRENCY = Number(process.env.BENCH_DEPLOY_CONCURRENCY ?? 8);
const HOPS = 3;
const ARRIVAL_SECONDS = 60;
const TARGET_P99_SECONDS = 5;

const bench = await startKeeperBench();
try {
  await bench.startWorkers(WORKERS);
  const countProcessing = async () =>
    (
      await bench.database.db.query<{ count: number }>(
        `SELECT count(*)::int AS count FROM transfers WHERE status = 'processing'`,
      )
    ).rows[0]!.count;
  let deploying = true;
  let peakInFlight = 0;
  const watching = (async () => {
    while (deploying) {
      peakInFlight = Math.max(peakInFlight, await countProcessing());
      await delay(500);
    }
  })();

  const started = performance.now();
  let routes: DeployedRoute[];
  try {
    routes = await bench.deploy({
      count: TRANSFERS,
      hops: HOPS,
      arrivalSeconds: ARRIVAL_SECONDS,
      concurrency: DEPLOY_CONCURRENCY,
    });
  } finally {
    deploying = false;
    await watching;
  }
  const deploySeconds = (performance.now() - started) / 1000;
  const ids = routes.map((route) => route.id);
  await bench.waitCompleted(ids, 15 * 60_000);
  const totalSeconds = (performance.now() - started) / 1000;

  // When each last hop landed, by the chain's clock: the time of its block.
  const { rows } = await bench.database.db.query<{ id: number; signature: Signature }>(
    `SELECT id, signatures -> 'hops' ->> -1 AS signature FROM transfers WHERE id = ANY($1)`,
    [ids],
  );
  const arrivalAt = new Map(routes.map((route) => [route.id, route.arrivalAt]));
  const lateness: number[] = [];
  for (const row of rows) {
    const landed = (await bench.rpc('getTransaction', [
      row.signature,
      { encoding: 'base64', maxSupportedTransactionVersion: 0 },
    ])) as { blockTime: number };
    lateness.push(landed.blockTime - arrivalAt.get(row.id)!);
  }
  lateness.sort((a, b) => a - b);
  const percentile = (p: number) => lateness[Math.min(lateness.length - 1, Math.floor(lateness.length * p))]!;

  process.stdout.write(
    `${TRANSFERS} transfers of ${HOPS} hops arriving ${ARRIVAL_SECONDS} s after prepare, ${WORKERS} worker processes, deployed ${DEPLOY_CONCURRENCY} at a time; the chain's clock follows the wall clock.\n\n${markdownTable(
      ['measure', 'measured', 'target'],
      [
        ['transfers completed', `${lateness.length} of ${TRANSFERS}`, 'all'],
        [
          'deployed in',
          `${deploySeconds.toFixed(0)} s (${(TRANSFERS / deploySeconds).toFixed(1)} per second)`,
          '',
        ],
        ['most in flight at once', peakInFlight, ''],
        ['all completed in', `${totalSeconds.toFixed(0)} s`, ''],
        ['lateness of arrival, p50', `${percentile(0.5)} s`, ''],
        ['lateness of arrival, p99', `${percentile(0.99)} s`, `< ${TARGET_P99_SECONDS} s`],
        ['lateness of arrival, worst', `${lateness.at(-1)} s`, ''],
      ],
    )}\n`,
  );
} finally {
  await bench.close();
}
