import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import { HOP_LATENESS_KEPT_MS } from '../store/keeper-health.ts';
import type { RetentionStore } from '../store/retention.ts';
import { runPeriodically } from './periodic.ts';

/**
 * Keeps the tables that only hold recent history from growing without bound: idempotency records
 * after their lifetime, events (with deliveries and attempts) after the retention window, worker
 * processes silent for a day, console sessions that ended, the hop lateness roll-up past the keeper
 * page's windows. Safe in
 * several processes at once: deletes of the same rows simply find less to do.
 */
export function createHousekeepingWorker(deps: {
  retention: RetentionStore;
  clock: Clock;
  log: Pick<Logger, 'info' | 'error'>;
  idempotencyTtlMs: number;
  eventRetentionMs: number;
  intervalMs?: number;
  batchSize?: number;
}) {
  const intervalMs = deps.intervalMs ?? 10 * 60_000;
  const batchSize = deps.batchSize ?? 1_000;
  let stopping = false;

  /** Repeats a batched delete until a batch comes back short; returns the total. */
  async function drain(deleteBatch: () => Promise<number>) {
    let total = 0;
    for (let deleted = batchSize; deleted === batchSize && !stopping; ) {
      deleted = await deleteBatch();
      total += deleted;
    }
    return total;
  }

  /** Deletes everything past its time now; returns what was deleted. */
  async function runOnce() {
    const now = deps.clock.now().getTime();
    const idempotencyBefore = new Date(now - deps.idempotencyTtlMs);
    const eventsBefore = new Date(now - deps.eventRetentionMs);
    const deleted = {
      idempotencyRecords: await drain(() =>
        deps.retention.deleteIdempotencyRecords(idempotencyBefore, batchSize),
      ),
      events: await drain(() => deps.retention.deleteEvents(eventsBefore, batchSize)),
      testAttempts: await drain(() => deps.retention.deleteTestAttempts(eventsBefore, batchSize)),
      silentWorkers: await deps.retention.deleteSilentWorkers(),
      consoleSessions: await drain(() => deps.retention.deleteEndedConsoleSessions(new Date(now), batchSize)),
      hopLateness: await drain(() =>
        deps.retention.deleteHopLateness(new Date(now - HOP_LATENESS_KEPT_MS), batchSize),
      ),
    };
    if (Object.values(deleted).some((count) => count > 0)) deps.log.info(deleted, 'housekeeping');
    return deleted;
  }

  const worker = runPeriodically({
    runOnce,
    intervalMs,
    firstDelayMs: 5_000,
    onError: (error) => deps.log.error({ err: error }, 'housekeeping failed'),
  });
  return {
    ...worker,
    start() {
      stopping = false;
      worker.start();
    },
    /** Stops (a round in progress ends after its current batch) and waits for it. */
    async stop() {
      stopping = true;
      await worker.stop();
    },
  };
}
