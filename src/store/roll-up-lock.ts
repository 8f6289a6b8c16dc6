import type { Db, Sql } from './db.ts';

/**
 * Runs a roll-up's `fold` in a transaction that holds the advisory lock `lockKey`, so that one
 * roll-up of a kind runs at a time across processes; answers what `fold` answered (rows folded),
 * or 0 when another process holds the lock.
 */
export function withRollUpLock(db: Db, lockKey: number, fold: (tx: Sql) => Promise<number>): Promise<number> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [
      lockKey,
    ]);
    return rows[0]!.locked ? fold(tx) : 0;
  });
}
