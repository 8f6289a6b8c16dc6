import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPostgresDb, type Db, type Sql } from '../src/store/db.ts';
import type { Lateness } from '../src/store/hop-lateness.ts';
import { createHopStore } from '../src/store/hops.ts';
import { createKeeperHealthStore } from '../src/store/keeper-health.ts';
import { migrate, readMigrations } from '../src/store/migrate.ts';
import { createSecretBox } from '../src/store/secret-box.ts';
import { TEST_SERVER_URL } from '../test/helpers/database.ts';
import { HOPS_PER_ROUTE, INTERVAL_SECONDS, seedHopEvents } from '../test/helpers/seed-hops.ts';
import { markdownTable } from './lib/load.ts';

/**
 * The operator's keeper page at scale: the time of `keeperHealth.read` (every figure of the page,
 * hop lateness over the last hour and the last 24 hours included) with BENCH_HOPS recorded hops
 * (`transfer.hop_complete` events, default 1,000,000) spread over the 24 hours before now, and the
 * cost of recording a hop through the keeper's store.
 *
 * Seeding. Routes of 10 hops and their hops' events, inserted in bulk (test/helpers/seed-hops.ts:
 * lateness median 0.6 s, a few seconds at p99, a tail to 2 min), into a database migrated to before
 * ROLL_UP_MIGRATION, which is then migrated to the latest, as a service upgraded with those events
 * would be (the report gives the migration's time). Reads run one at a time, with the service's
 * statement timeout (60 s); the first warms the caches and is not counted.
 *
 * Recording. BENCH_RECORDED hops (default 5,000) recorded through `hops.recordHop` in their own
 * transactions (the route row, its event and its deliveries, as the keeper writes them),
 * BENCH_CONCURRENCY at a time (default 16), on routes of the seeded integration all due at once:
 * recorded 0.3 to 2.75 s late (by route), then again all equally late.
 *
 *   npm run bench -- keeper-health   (BENCH_HOPS, BENCH_READS default 20, BENCH_RECORDED,
 *                                     BENCH_CONCURRENCY)
 */
const HOPS = Number(process.env.BENCH_HOPS ?? 1_000_000);
const READS = Number(process.env.BENCH_READS ?? 20);
const RECORDED = Number(process.env.BENCH_RECORDED ?? 5_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
/** The first migration that reads the seeded events: applied after seeding, and timed. */
const ROLL_UP_MIGRATION = 20;
// The real clock: a migration reads the last day of events by the database's.
const NOW = new Date(Math.floor(Date.now() / 1000) * 1000);

const name = `tr_bench_${randomBytes(4).toString('hex')}`;
const server = new pg.Client({ connectionString: TEST_SERVER_URL });
await server.connect();
await server.query(`CREATE DATABASE ${name}`);
const url = new URL(TEST_SERVER_URL);
url.pathname = `/${name}`;
const db = createPostgresDb({ url: url.toString(), poolSize: CONCURRENCY + 4 });
try {
  const migrations = await readMigrations();
  await migrate(
    db,
    migrations.filter((migration) => migration.version < ROLL_UP_MIGRATION),
  );
  let started = performance.now();
  const routes = await untimed(db, async (session) => {
    const { rows } = await session.query<{ id: string }>(
      `INSERT INTO integrations (name, created_at, updated_at) VALUES ('bench', $1, $1) RETURNING id`,
      [NOW],
    );
    return seedHopEvents(session, { integrationId: Number(rows[0]!.id), hops: HOPS, end: NOW });
  });
  const seedSeconds = (performance.now() - started) / 1000;
  started = performance.now();
  const upgraded = await migrate(db, migrations);
  const migrateSeconds = (performance.now() - started) / 1000;
  await untimed(db, (session) => session.exec('VACUUM ANALYZE'));
  const { rows: rolledUp } = await db.query<{ rows: number }>(
    'SELECT count(*)::int AS rows FROM hop_lateness_minutes',
  );

  const keeperHealth = createKeeperHealthStore(db);
  const query = { chainNow: BigInt(NOW.getTime() / 1000), now: NOW, limit: 20 };
  const times: number[] = [];
  const failures = new Map<string, number>();
  let first: Awaited<ReturnType<typeof keeperHealth.read>> | undefined;
  for (let index = 0; index <= READS; index++) {
    const began = performance.now();
    try {
      first = await keeperHealth.read(query);
    } catch (error) {
      // A read past the pool's statement timeout is what the page would show: an error.
      const message = (error as Error).message;
      if (index > 0) failures.set(message, (failures.get(message) ?? 0) + 1);
    }
    // The first read warms the caches and is not counted.
    if (index > 0) times.push(performance.now() - began);
  }
  // Hops as late as a keeper's run (0.3 to 2.75 s, by route), then all equally late (0.5 s): the
  // hops of a step then share a minute and a lateness, the most a recording can wait on another's.
  const spread = await recordHops(db, routes, (id) => 300 + (id % 50) * 50);
  const equal = await recordHops(db, routes, () => 500);

  const figures = (window: string, lateness: Lateness | undefined) => [
    window,
    lateness?.hops.toLocaleString('en-US') ?? '(no read answered)',
    lateness?.p50?.toFixed(3) ?? '—',
    lateness?.p99?.toFixed(3) ?? '—',
    lateness?.max?.toFixed(3) ?? '—',
  ];
  process.stdout.write(
    `${HOPS.toLocaleString('en-US')} hop_complete events over 24 h on ${routes.length.toLocaleString('en-US')} routes, ` +
      `seeded in ${seedSeconds.toFixed(1)} s; ` +
      (upgraded.length > 0
        ? `then migrations ${upgraded.join(', ')} in ${migrateSeconds.toFixed(1)} s ` +
          `(${rolledUp[0]!.rows.toLocaleString('en-US')} rows of hop lateness roll-up).\n\n`
        : 'no migration after them.\n\n') +
      `${markdownTable(['window', 'hops', 'p50 s', 'p99 s', 'worst s'], [figures('last hour', first?.lateness.lastHour), figures('last 24 hours', first?.lateness.lastDay)])}\n\n` +
      `${markdownTable(
        ['measure', 'p50 ms', 'p99 ms', 'max ms'],
        [
          [
            `keeperHealth.read (${READS} reads, one at a time${[...failures].map(([message, count]) => `; ${count} failed: ${message}`).join('')})`,
            percentile(times, 50).toFixed(1),
            percentile(times, 99).toFixed(1),
            Math.max(...times).toFixed(1),
          ],
          ...(
            [
              ['0.3 to 2.75 s late', spread],
              ['all 0.5 s late', equal],
            ] as const
          ).map(([late, recording]) => [
            `recording a hop, ${late} (${RECORDED.toLocaleString('en-US')}, ${CONCURRENCY} at a time: ${recording.perSecond.toFixed(0)} a second)`,
            percentile(recording.times, 50).toFixed(2),
            percentile(recording.times, 99).toFixed(2),
            Math.max(...recording.times).toFixed(2),
          ]),
        ],
      )}\n`,
  );
} finally {
  await db.close();
  await server.query(`DROP DATABASE ${name} WITH (FORCE)`);
  await server.end();
}

/** Runs `fn` on a session of its own with no statement timeout: the bench's work, not the service's. */
async function untimed<T>(sql: Db, fn: (session: Sql) => Promise<T>): Promise<T> {
  return sql.withSession(async (session) => {
    await session.exec('SET statement_timeout = 0');
    try {
      return await fn(session);
    } finally {
      await session.exec('RESET statement_timeout');
    }
  });
}

/**
 * Records hops through the keeper's store, `CONCURRENCY` at a time, each `lateMs(route)` after its
 * due time; answers each one's time.
 */
async function recordHops(sql: Db, routes: number[], lateMs: (route: number) => number) {
  const hops = createHopStore(sql, createSecretBox(randomBytes(32)));
  const chosen = routes.slice(0, Math.max(Math.ceil(RECORDED / (HOPS_PER_ROUTE - 1)), CONCURRENCY));
  // Every route on one schedule, from its first hop.
  const firstRelease = Math.floor(NOW.getTime() / 1000);
  await sql.query(
    `UPDATE transfers SET status = 'processing', phase = 'executing', hops_completed = 0, first_release_at = $2
      WHERE id = ANY($1::bigint[])`,
    [chosen, firstRelease],
  );
  const times: number[] = [];
  const began = performance.now();
  // Step by step, each route's hop of the step before the next step begins.
  for (let step = 0, left = RECORDED; step < HOPS_PER_ROUTE - 1 && left > 0; step++) {
    const work = chosen.slice(0, left);
    left -= work.length;
    const due = firstRelease + step * INTERVAL_SECONDS;
    const then = { nextDueAt: BigInt(due + INTERVAL_SECONDS) };
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < work.length) {
          const id = work[next++]!;
          const at = performance.now();
          const now = new Date(due * 1000 + lateMs(id));
          const recorded = await sql.transaction((tx) =>
            hops.recordHop(tx, id, { step, signature: `sig-${id}-${step}`, feesPaid: 5000n, then, now }),
          );
          if (!recorded) throw new Error(`hop ${step} of transfer ${id} was not recorded`);
          times.push(performance.now() - at);
        }
      }),
    );
  }
  return { times, perSecond: times.length / ((performance.now() - began) / 1000) };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}
