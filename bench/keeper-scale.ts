import type { Signature } from '@solana/kit';
import { startKeeperBench } from './lib/keeper-service.ts';
import { markdownTable } from './lib/load.ts';

/**
 * The keeper at scale, in real time: 1,000 transfers of 3 hops in flight at once, each arriving
 * 60 s after its prepare (the shortest arrival the API allows for 3 hops), carried by worker
 * processes (`npm run worker`, on the same PostgreSQL as the service, pointed at the chain with
 * RPC_URL). Every transfer is deployed through the API as an integrator deploys it (create,
 * prepare, the source's wallet signs and broadcasts, confirm-broadcast twice) while the chain's
 * clock stands still, so that all of them start at the same chain time however long deploying
 * takes (the chain runs in this process, on a clock the bench can stop); then the clock runs with
 * the wall clock, and every hop falls due on schedule: 1,000 hops 20 s later, 1,000 more at 40 s,
 * the last 1,000 at 60 s. Every transfer must complete. Reported: how late each arrived, the
 * chain's time of the block its last hop landed in against its target arrival (its last hop's due
 * time), at p50, p99 and worst.
 *
 *   npm run bench -- keeper-scale    (BENCH_TRANSFERS, default 1000; BENCH_WORKERS, default 2;
 *                                     BENCH_DEPLOY_CONCURRENCY deployments at a time, default 4)
 */
const TRANSFERS = Number(process.env.BENCH_TRANSFERS ?? 1000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const DEPLOY_CONCURRENCY = Number(process.env.BENCH_DEPLOY_CONCURRENCY ?? 4);
const HOPS = 3;
const ARRIVAL_SECONDS = 60;
const TARGET_P99_SECONDS = 5;

const bench = await startKeeperBench({ chainHere: true });
try {
  await bench.startWorkers(WORKERS);
  const clock = bench.chainClock!;
  clock.stop();
  const deployStarted = performance.now();
  const routes = await bench.deploy({
    count: TRANSFERS,
    hops: HOPS,
    arrivalSeconds: ARRIVAL_SECONDS,
    concurrency: DEPLOY_CONCURRENCY,
  });
  const deploySeconds = (performance.now() - deployStarted) / 1000;
  clock.start();
  const started = performance.now();
  const ids = routes.map((route) => route.id);
  await bench.waitCompleted(ids, 15 * 60_000);
  const runSeconds = (performance.now() - started) / 1000;

  // When each last hop landed, by the chain's clock: the time of its block.
  const { rows } = await bench.database.db.query<{ id: string; signature: Signature }>(
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
    lateness.push(landed.blockTime - arrivalAt.get(Number(row.id))!);
  }
  lateness.sort((a, b) => a - b);
  const percentile = (p: number) => lateness[Math.min(lateness.length - 1, Math.floor(lateness.length * p))]!;
  const firstDue = Math.min(...routes.map((route) => route.arrivalAt)) - ARRIVAL_SECONDS;

  process.stdout.write(
    `${TRANSFERS} transfers of ${HOPS} hops, all in flight at once, each arriving ${ARRIVAL_SECONDS} s after prepare (chain clock); ${WORKERS} worker processes.\n\n${markdownTable(
      ['measure', 'measured', 'target'],
      [
        ['transfers completed', `${lateness.length} of ${TRANSFERS}`, 'all'],
        [
          'deployed (clock stopped) in',
          `${deploySeconds.toFixed(0)} s, ${DEPLOY_CONCURRENCY} at a time (${(TRANSFERS / deploySeconds).toFixed(1)} per second)`,
          '',
        ],
        [
          'prepares at chain times',
          `${firstDue}-${Math.max(...routes.map((r) => r.arrivalAt)) - ARRIVAL_SECONDS}`,
          '',
        ],
        ['all completed, after the clock started', `${runSeconds.toFixed(0)} s`, `${ARRIVAL_SECONDS} s`],
        ['lateness of arrival, p50', `${percentile(0.5)} s`, ''],
        ['lateness of arrival, p99', `${percentile(0.99)} s`, `< ${TARGET_P99_SECONDS} s`],
        ['lateness of arrival, worst', `${lateness.at(-1)} s`, ''],
      ],
    )}\n`,
  );
} finally {
  await bench.close();
}
