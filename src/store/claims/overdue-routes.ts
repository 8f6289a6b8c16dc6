import type { Transfer } from '../../domain/transfer.ts';
import type { Db } from '../db.ts';
import { type TransferRow, toTransfer } from '../transfer-rows.ts';

/**
 * The overdue-route sweep's claim (src/workers/overdue-routes.ts, through the hop store's
 * `claimOverdue`): up to `limit` routes taken over (status `processing`) whose on-chain deadline
 * has passed by the chain's time `chainNow`, earliest deadline first. Several processes share the
 * sweep: each route is claimed by pushing its `next_check_at` to `now + leaseMs`, so a route looked
 * at is not looked at again before then, and the claim simply lapses (nothing releases it).
 */
export async function claimOverdueRoutes(
  db: Db,
  input: { chainNow: bigint; now: Date; leaseMs: number; limit: number },
): Promise<Transfer[]> {
  const { rows } = await db.query<TransferRow>(
    `UPDATE transfers SET next_check_at = $2::timestamptz + $3 * interval '1 millisecond'
      WHERE id IN (SELECT id FROM transfers
                    WHERE status = 'processing' AND deadline_at < $1
                      AND (next_check_at IS NULL OR next_check_at <= $2)
                    ORDER BY deadline_at LIMIT $4 FOR UPDATE SKIP LOCKED)
      RETURNING *`,
    [input.chainNow.toString(), input.now, input.leaseMs, input.limit],
  );
  return rows.map(toTransfer);
}
