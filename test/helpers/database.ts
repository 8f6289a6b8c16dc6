import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPostgresDb, type Db } from '../../src/store/db.ts';
import { migrate, readMigrations } from '../../src/store/migrate.ts';

/** The PostgreSQL server the tests use; every test file gets its own database on it. */
export const TEST_SERVER_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const TEMPLATE_LOCK_KEY = 4_271_009_001;

function urlFor(database: string): string {
  const url = new URL(TEST_SERVER_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

async function withServer<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_SERVER_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * A migrated template database named after the migrations' content, created once and cloned by
 * every test file (cloning takes milliseconds; migrating each time would not).
 */
async function templateDatabase(): Promise<string> {
  const migrations = await readMigrations();
  const digest = createHash('sha256')
    .update(migrations.map((migration) => `${migration.version}:${migration.sql}`).join('\n'))
    .digest('hex')
    .slice(0, 16);
  const template = `tr_template_${digest}`;
  await withServer(async (server) => {
    await server.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK_KEY]);
    try {
      const { rows } = await server.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
      if (rows.length > 0) return;
      // Built under a temporary name and renamed, so a crash never leaves a half-migrated template.
      const building = `${template}_building`;
      await server.query(`DROP DATABASE IF EXISTS ${building}`);
      await server.query(`CREATE DATABASE ${building}`);
      const db = createPostgresDb({ url: urlFor(building), poolSize: 1 });
      await migrate(db, migrations);
      await db.close();
      await server.query(`ALTER DATABASE ${building} RENAME TO ${template}`);
    } finally {
      await server.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK_KEY]);
    }
  });
  return template;
}

export interface TestDatabase {
  url: string;
  db: Db;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

/** A fresh, migrated database of its own for one test file. */
export async function createTestDatabase(options: { poolSize?: number } = {}): Promise<TestDatabase> {
  const template = await templateDatabase();
  const name = `tr_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await withServer(async (server) => {
    await server.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK_KEY]);
    try {
      await server.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
    } finally {
      await server.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK_KEY]);
    }
  });
  const url = urlFor(name);
  const db = createPostgresDb({ url, poolSize: options.poolSize ?? 10 });
  return {
    url,
    db,
    async drop() {
      await db.close();
      await withServer((server) => server.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/**
 * Another worker process in the worker register, alive until the test says it died: its claims
 * hold until `die`, and are free at once after (as seconds after a real one falls silent).
 */
export async function otherWorkerProcess(
  db: Pick<Db, 'query'>,
): Promise<{ id: string; die(): Promise<void> }> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO worker_processes (id, name, seen_at)
     VALUES (gen_random_uuid(), 'another host:1', clock_timestamp() + interval '1 hour') RETURNING id`,
  );
  const id = rows[0]!.id;
  return {
    id,
    async die() {
      await db.query(
        `UPDATE worker_processes SET seen_at = clock_timestamp() - interval '1 minute' WHERE id = $1`,
        [id],
      );
    },
  };
}
