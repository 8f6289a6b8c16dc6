import type { Logger } from 'pino';
import { runPeriodically } from './periodic.ts';

/** A roll-up: folds up to `batchSize` of what was appended into its totals; answers how many it folded. */
export type RollUp = (batchSize: number) => Promise<number>;

/**
 * Folds what writers append into the totals it belongs to: the changes to transfer totals
 * (src/store/transfer-totals.ts), so that a listing's total sums a few rows rather than every
 * change since the service started, and the lateness of recorded hops (src/store/hop-lateness.ts),
 * so that the keeper's page sums a few rows per minute. Figures are exact without it; it keeps
 * reading them cheap. Safe in several processes: one folds each roll-up at a time, the others find
 * its lock taken and wait for their next round.
 */
export function createRollUpWorker(deps: {
  rollUps: Readonly<Record<string, RollUp>>;
  log: Pick<Logger, 'error'>;
  intervalMs?: number;
  batchSize?: number;
}) {
  const batchSize = deps.batchSize ?? 10_000;
  /** Folds everything each roll-up has now, one after the other; answers how many rows in all. */
  async function runOnce(): Promise<number> {
    let total = 0;
    for (const [name, rollUp] of Object.entries(deps.rollUps)) {
      try {
        for (let folded = batchSize; folded === batchSize; ) {
          folded = await rollUp(batchSize);
          total += folded;
        }
      } catch (error) {
        // One roll-up failing leaves the others to run.
        deps.log.error({ err: error }, `rolling up ${name} failed`);
      }
    }
    return total;
  }

  return runPeriodically({
    runOnce,
    intervalMs: deps.intervalMs ?? 10_000,
    onError: (error) => deps.log.error({ err: error }, 'rolling up failed'),
  });
}
