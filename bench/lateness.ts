import { loadavg } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { BAD_DAY, type FaultProxy, startFaultProxy } from '@transfer-router/rpc-faults';
import { MAX_HOPS, MIN_HOPS, minArrivalSeconds } from '../src/domain/fees.ts';
import { processCpuMs } from './lib/cpu.ts';
import {
  type DeployedRoute,
  type PreparedRoute,
  startKeeperBench,
  type WorkerProcess,
} from './lib/keeper-service.ts';
import { markdownTable } from './lib/load.ts';

/**
 * Hop lateness, from a hop's due time on the chain's clock to the keeper recording it `confirmed`
 * (its `transfer.hop_complete` event), with two worker processes (`npm run worker`) on the chain
 * this process runs, started with the profile `LOCAL_CHAIN_PROFILE` and `LOCAL_CHAIN_SEED` name:
 *
 * - At sustained rates (BENCH_LATENESS_RATES hops a second, default 10 and 100), each for a window
 *   of BENCH_LATENESS_SECONDS (default 120): every second of the window has that many hops due.
 *   The routes hop every 15 s (the shortest interval allowed; longer for a window of more than
 *   135 s): the routes of group c (c from 0 to 14) have their first hop at second c of a warm-up
 *   interval before the window, at the same rate and not measured (fresh workers compile as they
 *   go), and their other hops at second c, c + 15, … of the window; a window shorter than a route's
 *   shortest run (4 hops) leaves its last hops after the window, not measured either. Then once
 *   more at the lowest of those rates (BENCH_LATENESS_FAULTS_RATE, 0 leaves it out) with the
 *   workers reaching the chain through the fault-injecting proxy on a bad day (packages/rpc-faults,
 *   `BAD_DAY`, BENCH_FAULTS_SEED); the routes are deployed straight to the chain.
 * - A burst: BENCH_LATENESS_BURST routes (default 1,000) whose first hops fall due at the same
 *   second: how long from then until the last of those hops completed (the drain), and their
 *   lateness. Their next hops would fall due about 10 minutes later, after the bench has ended.
 *
 * Deploying. Every route is real: created, prepared, signed by its source, landed and reported
 * through the API as an integrator does it with the TypeScript client (bench/lib/keeper-service.ts).
 * A route's schedule counts from the chain's clock when prepare builds it, and its first hop is
 * one interval later, so the routes are deployed ahead while the chain's clock stands still (the
 * chain runs in this process, on a clock the bench controls): group c is prepared at second c of
 * the interval before the warm-up and landed at once, BENCH_DEPLOY_CONCURRENCY at a time (default
 * 32) in both steps, the chain's time moved a second between groups, and only then does the clock
 * run with the wall's pace. The burst's routes are prepared in chunks of 100 the same way, chunk k
 * at second k with its interval k seconds shorter, so that all first hops fall due at one second;
 * the bench fails if they do not. Landing at once matters on a chain that includes transactions
 * only in later slots (the `mainnet` profile): slots must pass for bundles to land, one is made
 * every 400 ms while they land (the chain's time moving on a millisecond each time), and a
 * blockhash lives 150 of them: a bundle left waiting longer is prepared again by the client, on a
 * later second. The mainnet profile's endpoint also has stale windows, in which prepare could read
 * the clock of the second before: after each move the bench waits until no window can answer so.
 * Deploying the 1,500 routes of 100 hops a second takes 70 to 90 s on a 2-core machine at the
 * instant profile, five times the 15 s between a route's prepare and its first hop: on a running
 * clock they could not all be deployed ahead of their window.

 * Lateness is measured against the wall: once the clock runs, the chain's time keeps the distance
 * from the wall it had then (it stood still, and was moved on by time travel and by every slot
 * made), and a hop's due time is when the chain's time reached it. The keeper's CPU, its
 * PostgreSQL backends' and this process's (the chain, its RPC endpoint and its weather) are counted
 * from the moment the clock runs until every route completed (the burst: until its hops
 * completed), per hop completed meanwhile, warm-up and hops after the window included; the chain's
 * also as the share of one core it kept busy, as its event loop runs on one.
 *
 *   npm run bench -- lateness     (BENCH_LATENESS_SECONDS=20 for a short check)
 */
const RATES = (process.env.BENCH_LATENESS_RATES ?? '10,100').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_LATENESS_SECONDS ?? 120);
const FAULTS_RATE = Number(process.env.BENCH_LATENESS_FAULTS_RATE ?? Math.min(...RATES));
const BURST = Number(process.env.BENCH_LATENESS_BURST ?? 1000);
const DEPLOY_CONCURRENCY = Number(process.env.BENCH_DEPLOY_CONCURRENCY ?? 32);
const WORKERS = 2;
/** Between a burst route's hops: its second hop falls due long after the burst drained. */
const BURST_INTERVAL_SECONDS = 600;
/** Burst routes prepared and landed together, well within a blockhash's life. */
const BURST_CHUNK = 100;
/** How long before the burst the clock runs again: the keepers read it at least every 5 s. */
const BURST_LEAD_MS = 10_000;

for (const [name, value, least] of [
  ['BENCH_LATENESS_RATES', Math.min(...RATES), 1],
  ['BENCH_LATENESS_SECONDS', SECONDS, 1],
  ['BENCH_LATENESS_FAULTS_RATE', FAULTS_RATE, 0],
  ['BENCH_LATENESS_BURST', BURST, 0],
  ['BENCH_DEPLOY_CONCURRENCY', DEPLOY_CONCURRENCY, 1],
] as const) {
  if (!Number.isInteger(value) || value < least)
    throw new Error(`${name} takes integers of ${least} or more`);
}

/** The routes of a sustained rate: `rate` routes in each group. */
interface SustainedPlan {
  intervalSeconds: number;
  /** Group c's first hop is due c seconds into the warm-up. */
  groups: { offset: number; hops: number }[];
}

/**
 * Routes whose hops fall due at the same rate every second of a warm-up interval and of a window
 * of `seconds` after it: group c's first hop at second c of the warm-up, the others every
 * interval after, as many as the window holds (at least the fewest a route may have).
 */
function sustainedPlan(seconds: number): SustainedPlan {
  // The shortest interval allowed (15 s), longer when the window holds more hops than a route may have.
  const intervalSeconds = Math.max(
    minArrivalSeconds(MAX_HOPS) / MAX_HOPS,
    Math.ceil(seconds / (MAX_HOPS - 1)),
  );
  const groups = Array.from({ length: intervalSeconds }, (_, offset) => {
    let hops = Math.max(MIN_HOPS, 1 + Math.ceil((seconds - offset) / intervalSeconds));
    while (hops * intervalSeconds < minArrivalSeconds(hops)) hops++;
    return { offset, hops };
  });
  return { intervalSeconds, groups };
}

interface Lateness {
  hops: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

interface Cpu {
  keeperCpuMsPerHop: number;
  databaseCpuMsPerHop: number;
  /** This process's: the embedded chain, its RPC endpoint and its weather (and the bench's few reads). */
  chainCpuMsPerHop: number;
  /** The share of one core this process used meanwhile (its event loop runs on one). */
  chainBusy: number;
}

interface Sustained extends Lateness, Cpu {
  name: string;
  rate: number;
  routes: number;
  deploySeconds: number;
  /** Fewest and most hops due in one second of the window, as the deployed routes' schedules say. */
  duePerSecond: [number, number];
  /** Hops measured per second of the window, or of the time until the last of them completed if longer. */
  carriedPerSecond: number;
}

interface Burst extends Lateness, Cpu {
  routes: number;
  deploySeconds: number;
  /** Hops due at the burst's second, as the deployed routes' schedules say. */
  due: number;
}

// The hop_complete events of the transfers $1 whose hop was due from chain second $2 to before $3.
const HOPS_COMPLETED = `
  FROM events e JOIN transfers t ON t.id = e.transfer_id,
       LATERAL (SELECT t.first_release_at + ((e.payload -> 'data' -> 'transfer' -> 'progress' ->> 'hopsCompleted')::int - 1)
                       * t.interval_seconds AS due) h
 WHERE e.transfer_id = ANY($1) AND e.type = 'transfer.hop_complete' AND h.due >= $2 AND h.due < $3`;

const bench = await startKeeperBench({ chainHere: true });
const clock = bench.chainClock!;
const profile = bench.profile!;
let proxy: FaultProxy | undefined;
try {
  /** The second the chain's clock reads (unix seconds). */
  const chainSecond = () => Math.floor(bench.chainTimeMs() / 1000);

  /**
   * Moves the stopped chain's time to the middle of `second` (each slot made later moves it a
   * millisecond on), for prepare to read.
   */
  const showSecond = async (second: number) => {
    await bench.travelTo(second * 1000 + 500);
    // Prepare reads at `confirmed`, a slot or two behind the tip on a mainnet-like chain: those
    // slots are in the second too.
    if (profile.cluster) for (let slot = 0; slot < 2; slot++) bench.nextSlot();
    // A mainnet-like endpoint has stale windows: for `staleForMs` it answers a read with its answer
    // from up to `staleMaxAgeMs` before the window opened, here the clock of the second before.
    if (profile.weather) await delay(profile.weather.staleMaxAgeMs + profile.weather.staleForMs);
  };

  /** Lands prepared routes (see the header for how the chain's clock runs meanwhile). */
  async function land(prepared: readonly PreparedRoute[]): Promise<DeployedRoute[]> {
    // A mainnet-like chain includes what is sent only in later slots: one is made every slot's
    // length, the chain's time moving on a millisecond each time.
    const slots = profile.cluster ? setInterval(() => bench.nextSlot(), 400) : undefined;
    try {
      return await bench.land(prepared, { concurrency: DEPLOY_CONCURRENCY });
    } finally {
      clearInterval(slots);
    }
  }

  /**
   * Runs the chain's clock at the wall's pace, then waits for `done`: the CPU the workers and their
   * PostgreSQL backends used meanwhile, per hop of `ids` completed meanwhile, and how far the
   * chain's clock runs behind the wall.
   */
  async function runClock(
    workers: WorkerProcess[],
    ids: number[],
    done: () => Promise<unknown>,
  ): Promise<Cpu & { lagMs: number }> {
    const workersBefore = workers.map((worker) => processCpuMs(worker.pid));
    const databaseBefore = await bench.workerBackendsCpuMs();
    const chainBefore = process.cpuUsage();
    const since = new Date();
    clock.start();
    const lagMs = Date.now() - bench.chainTimeMs();
    await done();
    const chainUsage = process.cpuUsage(chainBefore);
    const chainCpu = (chainUsage.user + chainUsage.system) / 1000;
    const elapsedMs = Date.now() - since.getTime();
    const keeperCpu = workers.reduce(
      (sum, worker, i) => sum + processCpuMs(worker.pid) - workersBefore[i]!,
      0,
    );
    let databaseCpu = 0;
    for (const [pid, cpu] of await bench.workerBackendsCpuMs())
      databaseCpu += cpu - (databaseBefore.get(pid) ?? 0);
    const { rows } = await bench.database.db.query<{ hops: number }>(
      `SELECT count(*)::int AS hops FROM events
        WHERE transfer_id = ANY($1) AND type = 'transfer.hop_complete' AND created_at >= $2`,
      [ids, since],
    );
    const hops = rows[0]!.hops;
    return {
      lagMs,
      keeperCpuMsPerHop: keeperCpu / hops,
      databaseCpuMsPerHop: databaseCpu / hops,
      chainCpuMsPerHop: chainCpu / hops,
      chainBusy: chainCpu / elapsedMs,
    };
  }

  /** How late each hop of `ids` due from chain second `from` to before `to` completed, and when the last did. */
  async function latenessOf(
    ids: number[],
    { from, to, lagMs }: { from: number; to: number; lagMs: number },
  ): Promise<Lateness & { lastAtMs: number }> {
    const { rows } = await bench.database.db.query<{ ms: number; at: number }>(
      `SELECT (extract(epoch FROM e.created_at) * 1000 - (h.due * 1000 + $4::float8))::float8 AS ms,
              (extract(epoch FROM e.created_at) * 1000)::float8 AS at
       ${HOPS_COMPLETED} ORDER BY ms`,
      [ids, from, to, lagMs],
    );
    const ms = rows.map((row) => row.ms);
    const at = (share: number) => ms[Math.min(ms.length - 1, Math.floor(share * ms.length))]!;
    return {
      hops: ms.length,
      p50Ms: at(0.5),
      p99Ms: at(0.99),
      maxMs: ms.at(-1)!,
      lastAtMs: Math.max(...rows.map((row) => row.at)),
    };
  }

  /** Hops of `ids` due each second from `from` to before `to`, by the routes' schedules. */
  async function duePerSecond(ids: number[], from: number, to: number): Promise<number[]> {
    const { rows } = await bench.database.db.query<{ due: string; hops: number }>(
      `SELECT h.due, count(*)::int AS hops
         FROM transfers t, generate_series(0, t.hops - 1) AS step,
              LATERAL (SELECT t.first_release_at + step * t.interval_seconds AS due) h
        WHERE t.id = ANY($1) AND h.due >= $2 AND h.due < $3 GROUP BY h.due`,
      [ids, from, to],
    );
    const counts = new Array<number>(to - from).fill(0);
    for (const row of rows) counts[Number(row.due) - from] = row.hops;
    return counts;
  }

  /** `rate` hops due every second for SECONDS, carried by two workers reading the chain at `rpcUrl`. */
  async function sustained(name: string, rate: number, rpcUrl: string): Promise<Sustained> {
    const plan = sustainedPlan(SECONDS);
    const workers = await bench.startWorkers(WORKERS, { RPC_URL: rpcUrl });
    try {
      clock.stop();
      const firstPrepare = chainSecond() + 2;
      const deployStarted = performance.now();
      const ids: number[] = [];
      for (const { offset, hops } of plan.groups) {
        await showSecond(firstPrepare + offset);
        const prepared = await bench.prepare({
          count: rate,
          hops,
          arrivalSeconds: hops * plan.intervalSeconds,
          concurrency: DEPLOY_CONCURRENCY,
        });
        // Landed at once: a bundle whose blockhash expired is prepared again, on a later second.
        ids.push(...(await land(prepared)).map((route) => route.id));
      }
      const deploySeconds = (performance.now() - deployStarted) / 1000;
      const windowAt = firstPrepare + 2 * plan.intervalSeconds;
      const chainAt = chainSecond();
      if (chainAt >= windowAt - 1) {
        throw new Error(
          `landing the routes took the chain's clock to ${chainAt}, past the warm-up (the window starts at ${windowAt}); raise BENCH_DEPLOY_CONCURRENCY`,
        );
      }
      const due = await duePerSecond(ids, windowAt, windowAt + SECONDS);
      const totalHops = plan.groups.reduce((sum, group) => sum + group.hops * rate, 0);
      const cpu = await runClock(workers, ids, () =>
        // However far the keeper falls behind, it carries more than 10 hops a second.
        bench.waitCompleted(ids, (SECONDS + 2 * plan.intervalSeconds) * 1000 + totalHops * 100 + 300_000),
      );
      const lateness = await latenessOf(ids, { from: windowAt, to: windowAt + SECONDS, lagMs: cpu.lagMs });
      return {
        name,
        rate,
        routes: ids.length,
        deploySeconds,
        duePerSecond: [Math.min(...due), Math.max(...due)],
        ...lateness,
        carriedPerSecond:
          lateness.hops / Math.max(SECONDS, (lateness.lastAtMs - (windowAt * 1000 + cpu.lagMs)) / 1000),
        ...cpu,
      };
    } finally {
      for (const worker of workers) await worker.stop();
    }
  }

  /** BURST hops due at the same second, carried by two workers reading the chain directly. */
  async function burst(): Promise<Burst> {
    const workers = await bench.startWorkers(WORKERS);
    try {
      clock.stop();
      const firstPrepare = chainSecond() + 2;
      const dueAt = firstPrepare + BURST_INTERVAL_SECONDS;
      const deployStarted = performance.now();
      const ids: number[] = [];
      // In chunks, each landed as soon as it is prepared (see the sustained rates), the k-th
      // prepared k seconds after the first with its hops k seconds closer together: each slot made
      // while a chunk lands moves the chain's time a millisecond on, and all chunks' slots would
      // take it into the next second.
      for (let chunk = 0; chunk * BURST_CHUNK < BURST; chunk++) {
        await showSecond(firstPrepare + chunk);
        const prepared = await bench.prepare({
          count: Math.min(BURST_CHUNK, BURST - chunk * BURST_CHUNK),
          hops: MIN_HOPS,
          arrivalSeconds: MIN_HOPS * (BURST_INTERVAL_SECONDS - chunk),
          concurrency: DEPLOY_CONCURRENCY,
        });
        ids.push(...(await land(prepared)).map((route) => route.id));
      }
      const deploySeconds = (performance.now() - deployStarted) / 1000;
      const [due] = await duePerSecond(ids, dueAt, dueAt + 1);
      if (due !== ids.length) {
        const { rows } = await bench.database.db.query<{ at: string; routes: number }>(
          `SELECT first_release_at AS at, count(*)::int AS routes FROM transfers
            WHERE id = ANY($1) GROUP BY 1 ORDER BY 1`,
          [ids],
        );
        throw new Error(
          `${due} of the burst's ${ids.length} first hops are due at ${dueAt}: ${rows.map((row) => `${row.routes} at ${row.at}`).join(', ')}`,
        );
      }
      await bench.travelTo(dueAt * 1000 - BURST_LEAD_MS);
      const cpu = await runClock(workers, ids, async () => {
        const deadline = Date.now() + BURST_LEAD_MS + BURST * 100 + 300_000;
        for (;;) {
          const { rows } = await bench.database.db.query<{ hops: number }>(
            `SELECT count(*)::int AS hops ${HOPS_COMPLETED}`,
            [ids, dueAt, dueAt + 1],
          );
          if (rows[0]!.hops === due) return;
          if (Date.now() > deadline)
            throw new Error(`${rows[0]!.hops} of the burst's ${due} hops completed in time`);
          await delay(100);
        }
      });
      const lateness = await latenessOf(ids, { from: dueAt, to: dueAt + 1, lagMs: cpu.lagMs });
      return { routes: ids.length, deploySeconds, due: due!, ...lateness, ...cpu };
    } finally {
      for (const worker of workers) await worker.stop();
    }
  }

  const loadBefore = loadavg()[0]!;
  const rates: Sustained[] = [];
  for (const rate of RATES) rates.push(await sustained('the chain, directly', rate, bench.rpcUrl));
  if (FAULTS_RATE > 0) {
    proxy = await startFaultProxy({
      upstream: bench.rpcUrl,
      faults: { ...BAD_DAY, seed: process.env.BENCH_FAULTS_SEED ?? 'bench' },
    });
    rates.push(await sustained('through the fault proxy, BAD_DAY', FAULTS_RATE, proxy.url));
  }
  const burstMeasured = BURST > 0 ? await burst() : undefined;

  const seconds = (ms: number) => (ms / 1000).toFixed(2);
  const chainCpu = (m: Cpu) => `${m.chainCpuMsPerHop.toFixed(1)} (${(100 * m.chainBusy).toFixed(0)}%)`;
  const plan = sustainedPlan(SECONDS);
  process.stdout.write(
    `Chain profile ${profile.name} (seed ${profile.seed}), ${WORKERS} worker processes; the machine's load average (1 min) ${loadBefore.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after.\n\n` +
      `Sustained: hops due every second of a ${SECONDS} s window, after ${plan.intervalSeconds} s of warm-up at the same rate; routes of ${[...new Set(plan.groups.map((group) => group.hops))].join(' or ')} hops ${plan.intervalSeconds} s apart, deployed ahead, ${DEPLOY_CONCURRENCY} at a time, the chain's clock ${profile.cluster ? 'stopped, a slot made every 400 ms while they landed' : 'stopped'}.\n\n${markdownTable(
        [
          'hops due per second',
          'RPC endpoint',
          'hops measured',
          'due in one second (min-max)',
          'lateness p50 (s)',
          'p99 (s)',
          'max (s)',
          'carried (hops/s)',
          'keeper CPU ms per hop',
          'PostgreSQL CPU ms per hop',
          'chain CPU ms per hop (busy)',
          'routes, deployed in',
        ],
        rates.map((m) => [
          m.rate,
          m.name,
          m.hops,
          `${m.duePerSecond[0]}-${m.duePerSecond[1]}`,
          seconds(m.p50Ms),
          seconds(m.p99Ms),
          seconds(m.maxMs),
          m.carriedPerSecond.toFixed(1),
          m.keeperCpuMsPerHop.toFixed(1),
          m.databaseCpuMsPerHop.toFixed(1),
          chainCpu(m),
          `${m.routes}, ${m.deploySeconds.toFixed(0)} s`,
        ]),
      )}\n`,
  );
  if (proxy) process.stdout.write(`\nFaults the proxy injected: ${JSON.stringify(proxy.stats())}\n`);
  if (burstMeasured) {
    const b = burstMeasured;
    process.stdout.write(
      `\nBurst: ${b.due} hops due at the same second (the first hops of ${b.routes} routes, deployed ahead in ${b.deploySeconds.toFixed(0)} s), directly.\n\n${markdownTable(
        [
          'hops measured',
          'drained in (s, due to the last completed)',
          'lateness p50 (s)',
          'p99 (s)',
          'keeper CPU ms per hop',
          'PostgreSQL CPU ms per hop',
          'chain CPU ms per hop (busy)',
        ],
        [
          [
            b.hops,
            seconds(b.maxMs),
            seconds(b.p50Ms),
            seconds(b.p99Ms),
            b.keeperCpuMsPerHop.toFixed(1),
            b.databaseCpuMsPerHop.toFixed(1),
            chainCpu(b),
          ],
        ],
      )}\n`,
    );
  }
} finally {
  await proxy?.close();
  await bench.close();
}
