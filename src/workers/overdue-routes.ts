import type { Logger } from 'pino';
import type { HopStore } from '../store/hops.ts';
import { type OverdueDeps, settleOverdueRoute } from '../use-cases/overdue.ts';
import type { RoutedTransfer } from '../use-cases/recovery.ts';
import { drainClaims, runPeriodically } from './periodic.ts';

/**
 * Looks, every `intervalMs` (30 s by default), for routes taken over whose on-chain deadline has
 * passed, and records each as the chain shows it (src/use-cases/overdue.ts): an overdue route becomes
 * `recoverable`, so integrators learn by webhook that the source can rescue it, even when no
 * keeper is alive. Each route is claimed for one interval, so several processes share the work.
 */
export function createOverdueRouteWorker(
  deps: OverdueDeps & {
    hops: Pick<HopStore, 'claimOverdue'>;
    log: Pick<Logger, 'info' | 'warn' | 'error'>;
    intervalMs?: number;
    batchSize?: number;
  },
) {
  const intervalMs = deps.intervalMs ?? 30_000;
  const batchSize = deps.batchSize ?? 50;
  /** Settles every overdue route claimable now; answers how many it looked at. */
  async function runOnce(): Promise<number> {
    const chainNow = (await deps.chain.getClock()).unixTimestamp;
    return drainClaims({
      claim: () =>
        deps.hops.claimOverdue({ chainNow, now: deps.clock.now(), leaseMs: intervalMs, limit: batchSize }),
      batchSize,
      handle: async (transfer) => {
        const after = await settleOverdueRoute(deps, transfer as RoutedTransfer);
        if (after && after.phase !== transfer.phase) {
          deps.log.info({ transferId: transfer.id, to: after.phase }, 'overdue route recorded');
        }
      },
      onItemError: (transfer, error) =>
        deps.log.warn({ err: error, transferId: transfer.id }, 'settling an overdue route failed'),
    });
  }

  return runPeriodically({
    runOnce,
    intervalMs,
    onError: (error) => deps.log.error({ err: error }, 'overdue route sweep failed'),
  });
}
