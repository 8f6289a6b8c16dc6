import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import type { TransferStore } from '../store/transfers.ts';
import { runPeriodically } from './periodic.ts';

/**
 * Moves quotes past `expiresAt` to `expired` (with their events). Safe to run in several
 * processes at once: each batch is claimed with `SKIP LOCKED`.
 */
export function createExpiryWorker(deps: {
  transfers: TransferStore;
  clock: Clock;
  log: Pick<Logger, 'info' | 'error'>;
  intervalMs?: number;
  batchSize?: number;
}) {
  const intervalMs = deps.intervalMs ?? 5_000;
  const batchSize = deps.batchSize ?? 200;
  /** Expires everything due now; returns how many transfers expired. */
  async function runOnce(): Promise<number> {
    let total = 0;
    for (;;) {
      const expired = await deps.transfers.expireDue(deps.clock.now(), batchSize);
      total += expired.length;
      if (expired.length < batchSize) break;
    }
    if (total > 0) deps.log.info({ expired: total }, 'expired quotes');
    return total;
  }

  return runPeriodically({
    runOnce,
    intervalMs,
    onError: (error) => deps.log.error({ err: error }, 'expiry run failed'),
  });
}
