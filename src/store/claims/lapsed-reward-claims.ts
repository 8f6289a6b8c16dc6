import type { RewardClaim } from '../../domain/rewards.ts';
import type { Db } from '../db.ts';
import { type RewardClaimRow, toRewardClaim } from '../reward-claims.ts';

/**
 * The reward claims worker's claim (src/workers/reward-claims.ts, through `resumeClaims` and the
 * reward store's `takeOverPending`): up to `limit` pending reward claims whose sender's lease
 * lapsed (its process died, or it stopped waiting), earliest lapse first. Each is leased again
 * until `now + leaseMs`, so several workers share them; the lease lapses in turn unless the claim's
 * payout is confirmed or failed before then.
 */
export async function claimLapsedRewardClaims(
  db: Db,
  now: Date,
  leaseMs: number,
  limit: number,
): Promise<RewardClaim[]> {
  const { rows } = await db.query<RewardClaimRow>(
    `UPDATE reward_claims SET lease_until = $1::timestamptz + $2 * interval '1 millisecond'
      WHERE id IN (SELECT id FROM reward_claims WHERE status = 'pending' AND lease_until <= $1
                    ORDER BY lease_until LIMIT $3 FOR UPDATE SKIP LOCKED)
      RETURNING *`,
    [now, leaseMs, limit],
  );
  return rows.map(toRewardClaim);
}
