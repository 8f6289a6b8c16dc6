import type { Sql } from './db.ts';

/**
 * The database as the server itself names it, whatever URL reached it: the cluster's system
 * identifier and the database's name. Every process of one deployment gets the same answer, and
 * another deployment (another database, or another server) a different one.
 */
export async function databaseIdentity(db: Sql): Promise<string> {
  const { rows } = await db.query<{ identity: string }>(
    "SELECT system_identifier || ':' || current_database() AS identity FROM pg_control_system()",
  );
  return rows[0]!.identity;
}

/**
 * How many other processes are connected to this database under an application name starting
 * with `prefix`, each process naming its connections `<prefix><its own id>` (and its LISTEN
 * connection the same with " (notifications)" after it).
 */
export async function countOtherProcesses(db: Sql, prefix: string, self: string): Promise<number> {
  const { rows } = await db.query<{ others: number }>(
    `SELECT count(DISTINCT split_part(application_name, ' (', 1))::int AS others
       FROM pg_stat_activity
      WHERE datname = current_database()
        AND starts_with(application_name, $1)
        AND split_part(application_name, ' (', 1) <> $2`,
    [prefix, self],
  );
  return rows[0]!.others;
}
