import type { Sql } from '../db.ts';

/**
 * Quote expiry's claim (src/workers/expiry.ts, through the transfer store's `expireDue`): the ids
 * of up to `limit` quotes whose `expiresAt` has passed by `now`, earliest first, locked in the
 * caller's transaction `tx` with `SKIP LOCKED`, so that several workers share the batches. The
 * claim lasts as long as the transaction: it ends with the commit that expires them (or the
 * rollback that leaves them for the next worker).
 */
export async function claimExpiredQuotes(tx: Sql, now: Date, limit: number): Promise<number[]> {
  const { rows } = await tx.query<{ id: string }>(
    `SELECT id FROM transfers WHERE status = 'quote' AND expires_at <= $1
      ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [now, limit],
  );
  return rows.map((row) => Number(row.id));
}
