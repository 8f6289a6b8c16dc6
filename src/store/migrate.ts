import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Db } from './db.ts';

const MIGRATIONS_DIR = join(import.meta.dirname, 'migrations');
/** Arbitrary constant: the advisory lock every process takes while migrating. */
const MIGRATION_LOCK_KEY = 4_271_003_001;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Reads the numbered `NNNN_name.sql` files, in order. */
export async function readMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file)).sort();
  return Promise.all(
    files.map(async (file) => ({
      version: Number(file.slice(0, 4)),
      name: file.slice(5, -4),
      sql: await readFile(join(dir, file), 'utf8'),
    })),
  );
}

/**
 * Applies pending migrations, each in its own transaction, under a session advisory lock so that
 * several processes starting at once migrate exactly once. Returns the versions applied.
 */
export async function migrate(db: Db, migrations?: Migration[]): Promise<number[]> {
  const all = migrations ?? (await readMigrations());
  return db.withSession(async (session) => {
    // A migration may take as long as it needs; so may waiting for another process's.
    await session.exec('SET statement_timeout = 0');
    await session.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await session.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version    integer PRIMARY KEY,
        name       text        NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const { rows } = await session.query<{ version: number }>('SELECT version FROM schema_migrations');
      const applied = new Set(rows.map((row) => row.version));
      const done: number[] = [];
      for (const migration of all) {
        if (applied.has(migration.version)) continue;
        await session.exec('BEGIN');
        try {
          await session.exec(migration.sql);
          await session.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
            migration.version,
            migration.name,
          ]);
          await session.exec('COMMIT');
        } catch (error) {
          await session.exec('ROLLBACK');
          throw new Error(
            `Migration ${migration.version}_${migration.name} failed: ${(error as Error).message}`,
            {
              cause: error,
            },
          );
        }
        done.push(migration.version);
      }
      return done;
    } finally {
      await session.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
      await session.exec('RESET statement_timeout');
    }
  });
}
