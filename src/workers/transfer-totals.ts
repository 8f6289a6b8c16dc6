import type { Logger } from 'pino';
import type { TransferTotalsStore } from '../store/transfer-totals.ts';
import { runPeriodically } from './periodic.ts';

/**
 * Folds the changes to transfer totals into them (src/store/transfer-totals.ts), so that a
 * listing's total sums a few rows rather than every change since the service started. Totals are
 * exact without it; it keeps reading them cheap. Safe in several processes: one rolls up at a
 * time, the others find the lock taken and wait for their next round.
 */
export function createTransferTotalsWorker(deps: {
  totals: TransferTotalsStore;
  log: Pick<Logger, 'error'>;
  intervalMs?: number;
  batchSize?: number;
}) {
  const batchSize = deps.batchSize ?? 10_000;
  /** Folds every change there is now; returns how many. */
  async function runOnce(): Promise<number> {
    let total = 0;
    for (let folded = batchSize; folded === batchSize; ) {
      folded = await deps.totals.rollUp(batchSize);
      total += folded;
    }
    return total;
  }

  return runPeriodically({
    runOnce,
    intervalMs: deps.intervalMs ?? 10_000,
    onError: (error) => deps.log.error({ err: error }, 'rolling up transfer totals failed'),
  });
}
