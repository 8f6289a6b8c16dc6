// What the proxy does wrong, and how often: every rate is a share of requests (or of sends, or of
// transactions) from 0 to 1, every duration in milliseconds, and the seed makes the draws repeat.

/** The faults a proxy injects. Zero rates (the default) make it a plain pass-through. */
export interface FaultPlan {
  /** Seed of every draw: the same seed and the same requests in the same order meet the same faults. */
  seed: string;
  /**
   * Share of `sendTransaction` calls answered with the transaction's signature and never passed on,
   * once the endpoint's own preflight (a simulation) found nothing wrong: a node or leader dropping it.
   */
  dropSends: number;
  /** Share of requests answered HTTP 429 with `Retry-After: retryAfterSeconds`. */
  rateLimited: number;
  retryAfterSeconds: number;
  /** Share of requests answered HTTP 503. */
  unavailable: number;
  /** Share of requests held `holdMs` before they are passed on (and answered, if anyone still waits). */
  held: number;
  holdMs: number;
  /**
   * Stale windows, on average one every `staleEveryMs` (0: none), each `staleForMs` long: reads
   * are answered with what the endpoint answered to the same request before the window opened, at
   * most `staleMaxAgeMs` before it, as a node that fell behind answers.
   */
  staleEveryMs: number;
  staleForMs: number;
  staleMaxAgeMs: number;
  /**
   * Share of landed transactions shown `processed` (not yet `confirmed`) for `processedForMs` after
   * the proxy first sees them: their status says so, and `getTransaction` (which reads confirmed
   * blocks) does not find them yet.
   */
  processedFirst: number;
  processedForMs: number;
}

/** No faults at all. */
export const NO_FAULTS: FaultPlan = {
  seed: '0',
  dropSends: 0,
  rateLimited: 0,
  retryAfterSeconds: 1,
  unavailable: 0,
  held: 0,
  holdMs: 10_000,
  staleEveryMs: 0,
  staleForMs: 2_000,
  staleMaxAgeMs: 3_000,
  processedFirst: 0,
  processedForMs: 1_500,
};

const RATES = ['dropSends', 'rateLimited', 'unavailable', 'held', 'processedFirst'] as const;
const DURATIONS = [
  'retryAfterSeconds',
  'holdMs',
  'staleEveryMs',
  'staleForMs',
  'staleMaxAgeMs',
  'processedForMs',
] as const;

/** The plan with `NO_FAULTS` filling what `partial` leaves out; throws on a rate or duration out of range. */
export function faultPlan(partial: Partial<FaultPlan> = {}): FaultPlan {
  const plan = { ...NO_FAULTS, ...partial };
  const problems: string[] = [];
  for (const name of RATES) {
    if (!(plan[name] >= 0 && plan[name] <= 1)) problems.push(`${name} must be from 0 to 1`);
  }
  for (const name of DURATIONS) {
    if (!(Number.isFinite(plan[name]) && plan[name] >= 0)) problems.push(`${name} must be a number ≥ 0`);
  }
  if (plan.rateLimited + plan.unavailable + plan.held > 1) {
    problems.push(
      'rateLimited + unavailable + held must not exceed 1 (each request meets one of them at most)',
    );
  }
  if (problems.length > 0) throw new RangeError(`Invalid fault plan: ${problems.join('; ')}`);
  return plan;
}

/**
 * A bad day at an RPC provider: 9% of sends dropped, 5% of requests throttled, 1% failed, 2% held
 * 10 s, a 1.5 s stale window every 8 s on average, half the transactions processed for 1.5 s before
 * they show confirmed.
 */
export const BAD_DAY: Partial<FaultPlan> = {
  dropSends: 0.09,
  rateLimited: 0.05,
  retryAfterSeconds: 1,
  unavailable: 0.01,
  held: 0.02,
  holdMs: 10_000,
  staleEveryMs: 8_000,
  staleForMs: 1_500,
  staleMaxAgeMs: 2_000,
  processedFirst: 0.5,
  processedForMs: 1_500,
};
