import type { Logger } from 'pino';
import { type ClaimDeps, resumeClaims } from '../rewards/claims.ts';
import { runPeriodically } from './periodic.ts';

/**
 * Completes reward claims whose sender stopped before their payout was settled (its process died,
 * or its request stopped waiting): once a claim's lease lapses, sends its stored transaction
 * again and records it confirmed, or failed with its amounts claimable again. Safe in several
 * processes at once: each claim is taken over with `SKIP LOCKED` under a new lease.
 */
export function createRewardClaimWorker(
  deps: ClaimDeps & { log: Pick<Logger, 'info' | 'warn'>; intervalMs?: number },
) {
  /** Takes over every lapsed claim now; answers how many. */
  async function runOnce(): Promise<number> {
    const resumed = await resumeClaims(deps);
    if (resumed > 0) deps.log.info({ resumed }, 'resumed pending reward claims');
    return resumed;
  }
  return runPeriodically({
    runOnce,
    intervalMs: deps.intervalMs ?? 15_000,
    onError: (error) => deps.log.warn({ err: error }, 'resuming reward claims failed; retrying later'),
  });
}
