import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import pg from 'pg';
import { createPostgresDb } from '../../src/store/db.ts';
import { createKeeperHealthStore } from '../../src/store/keeper-health.ts';
import { migrate, readMigrations } from '../../src/store/migrate.ts';
import { TEST_SERVER_URL } from '../helpers/database.ts';
import { seedHopEvents } from '../helpers/seed-hops.ts';
import { seedTransfers } from '../helpers/seed-transfers.ts';

/** Runs `use` on a database of its own (a pool of `poolSize`, and its URL), created empty and dropped after. */
async function withEmptyDatabase(
  use: (db: ReturnType<typeof createPostgresDb>, url: string) => Promise<void>,
  poolSize = 1,
) {
  const name = `tr_migrate_${randomBytes(4).toString('hex')}`;
  const server = new pg.Client({ connectionString: TEST_SERVER_URL });
  await server.connect();
  await server.query(`CREATE DATABASE ${name}`);
  const url = new URL(TEST_SERVER_URL);
  url.pathname = `/${name}`;
  const db = createPostgresDb({ url: url.toString(), poolSize });
  try {
    await use(db, url.toString());
  } finally {
    await db.close();
    await server.query(`DROP DATABASE ${name} WITH (FORCE)`);
    await server.end();
  }
}

test('processes migrating one empty database at once apply each migration exactly once', () =>
  withEmptyDatabase(async (_db, url) => {
    const pools = Array.from({ length: 4 }, () => createPostgresDb({ url, poolSize: 2 }));
    try {
      const applied = await Promise.all(pools.map((db) => migrate(db)));
      const versions = (await readMigrations()).map((migration) => migration.version);
      assert.deepEqual(
        applied.flat().sort((a, b) => a - b),
        versions,
        'each version applied by exactly one process',
      );
      const { rows } = await pools[0]!.query<{ version: number }>(
        'SELECT version FROM schema_migrations ORDER BY version',
      );
      assert.deepEqual(
        rows.map((row) => row.version),
        versions,
      );
      assert.deepEqual(await migrate(pools[1]!), [], 'a later start has nothing to do');
      const types = await pools[0]!.query<{ column_name: string; data_type: string }>(
        `SELECT column_name, data_type FROM information_schema.columns
        WHERE table_name = 'transfers' AND column_name IN ('amount_raw', 'created_at', 'percent_fee_raw') ORDER BY column_name`,
      );
      assert.deepEqual(types.rows, [
        { column_name: 'amount_raw', data_type: 'numeric' },
        { column_name: 'created_at', data_type: 'timestamp with time zone' },
        { column_name: 'percent_fee_raw', data_type: 'numeric' },
      ]);
    } finally {
      await Promise.all(pools.map((db) => db.close()));
    }
  }));

test('a failing migration rolls back entirely and is reported with its name', () =>
  withEmptyDatabase(async (db) => {
    await assert.rejects(
      migrate(db, [
        { version: 1, name: 'broken', sql: 'CREATE TABLE half_done (id int); SELECT no_such_function();' },
      ]),
      /Migration 1_broken failed/,
    );
    const { rows } = await db.query(`SELECT to_regclass('half_done') AS table_name`);
    assert.deepEqual(rows, [{ table_name: null }]);
  }));

test('the migration that keeps transfer totals starts them from the transfers already there', () =>
  withEmptyDatabase(async (db) => {
    const migrations = await readMigrations();
    await migrate(
      db,
      migrations.filter((migration) => migration.version < 16),
    );
    const seed = { start: new Date('2026-03-30T20:00:00.000Z'), days: 3 };
    await seedTransfers(db, { integrationId: 1, mode: 'test', count: 200, ...seed });
    await seedTransfers(db, { integrationId: 1, mode: 'live', count: 30, ...seed });
    await seedTransfers(db, { integrationId: 2, mode: 'test', count: 40, ...seed });
    assert.deepEqual(
      await migrate(
        db,
        migrations.filter((migration) => migration.version <= 16),
      ),
      [16],
    );
    const counted = (sql: string) => db.query(sql).then((result) => result.rows);
    assert.deepEqual(
      await counted(`SELECT integration_id, mode, status, transfers FROM transfer_totals ORDER BY 1, 2, 3`),
      await counted(
        `SELECT integration_id, mode, status, count(*) AS transfers FROM transfers GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
      ),
    );
    assert.deepEqual(
      await counted(
        `SELECT integration_id, mode, status, created_on::text, transfers FROM transfer_day_totals ORDER BY 1, 2, 3, 4`,
      ),
      await counted(
        `SELECT integration_id, mode, status, ((created_at AT TIME ZONE 'UTC')::date)::text AS created_on,
                count(*) AS transfers
           FROM transfers GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`,
      ),
    );
    assert.deepEqual(await counted('SELECT * FROM transfer_total_changes'), []);
  }));

test('the migration that rolls up hop lateness starts it from the last day’s hop events, as the keeper’s page computed it from them', () =>
  withEmptyDatabase(async (db) => {
    const migrations = await readMigrations();
    await migrate(
      db,
      migrations.filter((migration) => migration.version < 20),
    );
    // The migration reads the last day by the database's clock.
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO integrations (name, created_at, updated_at) VALUES ('hops', $1, $1) RETURNING id`,
      [now],
    );
    await seedHopEvents(db, { integrationId: Number(rows[0]!.id), hops: 6_000, end: now });
    // The page's figures until migration 0020, over the windows the roll-up counts (whole minutes).
    const before = async (hours: number) =>
      (
        await db.query<{ hops: number; p50: number; p99: number; max: number }>(
          `SELECT count(*)::int AS hops,
                  percentile_cont(0.5) WITHIN GROUP (ORDER BY late) AS p50,
                  percentile_cont(0.99) WITHIN GROUP (ORDER BY late) AS p99,
                  max(late) AS max
             FROM (SELECT greatest(0, extract(epoch FROM e.created_at)
                           - (t.first_release_at
                              + ((e.payload -> 'data' -> 'transfer' -> 'progress' ->> 'hopsCompleted')::int - 1)
                                * t.interval_seconds))::float8 AS late
                     FROM events e JOIN transfers t ON t.id = e.transfer_id
                    WHERE e.type = 'transfer.hop_complete'
                      AND e.created_at >= date_trunc('minute', $1::timestamptz - $2 * interval '1 hour')) hops`,
          [now, hours],
        )
      ).rows[0]!;
    const exact = { lastHour: await before(1), lastDay: await before(24) };
    assert.ok(exact.lastHour.hops > 100 && exact.lastDay.hops > 5_900, JSON.stringify(exact));

    assert.deepEqual(
      await migrate(db, migrations),
      migrations.filter((migration) => migration.version >= 20).map((migration) => migration.version),
    );
    const { lateness } = await createKeeperHealthStore(db).read({ chainNow: 0n, now, limit: 1 });
    for (const window of ['lastHour', 'lastDay'] as const) {
      const [figures, expected] = [lateness[window], exact[window]];
      assert.deepEqual([figures.hops, figures.max], [expected.hops, expected.max], window);
      for (const q of ['p50', 'p99'] as const) {
        assert.ok(
          Math.abs(figures[q]! - expected[q]) <= 0.045 * expected[q],
          `${window} ${q}: ${figures[q]} against ${expected[q]}`,
        );
      }
    }
  }, 2));

test('an index of 0016 or 0017 built beforehand without blocking writes is kept; an invalid one stops the migration', () =>
  withEmptyDatabase(async (db) => {
    const migrations = await readMigrations();
    await migrate(
      db,
      migrations.filter((migration) => migration.version < 16),
    );
    await seedTransfers(db, { integrationId: 1, mode: 'test', count: 100, start: new Date(), days: 1 });
    // As docs/operations.md has an operator do it: outside a transaction, under the migration's names.
    await db.query(
      'CREATE INDEX CONCURRENTLY transfers_listing_status_idx ON transfers (integration_id, mode, status, created_at DESC, id DESC)',
    );
    await db.query(
      `CREATE INDEX CONCURRENTLY transfers_failed_idx ON transfers (updated_at) WHERE phase IN ('failed', 'recoverable')`,
    );
    const indexes = async () =>
      (
        await db.query<{ indexname: string; indexdef: string }>(
          `SELECT indexname, indexdef FROM pg_indexes
            WHERE tablename = 'transfers' AND indexname IN ('transfers_listing_status_idx', 'transfers_failed_idx')
            ORDER BY indexname`,
        )
      ).rows;
    const built = await indexes();
    // One that failed half-way is left invalid.
    await db.query(
      `UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'transfers_listing_status_idx'::regclass`,
    );
    await assert.rejects(
      migrate(
        db,
        migrations.filter((migration) => migration.version <= 16),
      ),
      /Migration 16_transfer_listing failed: index transfers_listing_status_idx is invalid/,
    );
    await db.query('DROP INDEX transfers_listing_status_idx');
    await db.query(
      'CREATE INDEX CONCURRENTLY transfers_listing_status_idx ON transfers (integration_id, mode, status, created_at DESC, id DESC)',
    );
    assert.deepEqual(
      await migrate(db, migrations),
      migrations.map((migration) => migration.version).filter((version) => version >= 16),
    );
    assert.deepEqual(await indexes(), built);
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_index WHERE indrelid = 'transfers'::regclass AND NOT indisvalid`,
    );
    assert.equal(rows[0]!.n, 0);
  }));
