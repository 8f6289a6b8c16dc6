import type { Transfer } from '../../domain/transfer.ts';
import type { Db } from '../db.ts';
import { type TransferRow, toTransfer } from '../transfer-rows.ts';

/**
 * The deployment reconciler's claim (src/workers/deployment-reconciler.ts, through the deployment
 * store's `claimAwaitingDeployment`): up to `limit` prepared transfers (status
 * `awaiting_signature`) due for a look at the chain, oldest check first. Each is claimed by pushing
 * its `next_check_at` to `now + leaseMs`, so several processes share the work; the claim simply
 * lapses (nothing releases it), and a crashed process's transfers are due again then.
 */
export async function claimAwaitingDeployment(
  db: Db,
  now: Date,
  leaseMs: number,
  limit: number,
): Promise<Transfer[]> {
  const { rows } = await db.query<TransferRow>(
    `UPDATE transfers SET next_check_at = $1::timestamptz + $2 * interval '1 millisecond'
      WHERE id IN (SELECT id FROM transfers
                    WHERE status = 'awaiting_signature' AND next_check_at <= $1
                    ORDER BY next_check_at LIMIT $3 FOR UPDATE SKIP LOCKED)
      RETURNING *`,
    [now, leaseMs, limit],
  );
  return rows.map(toTransfer);
}
