/**
 * When a failed webhook delivery is tried again. Pure: the caller passes the time and a random
 * number, so the schedule is unit-tested and documented from one place.
 */

/** How long a delivery is retried after it was (re)armed; then it fails and may disable its endpoint. */
export const RETRY_WINDOW_MS = 3 * 24 * 3600 * 1000;
/** The delay after the first failed attempt. */
export const FIRST_RETRY_DELAY_MS = 10_000;
/** Each further delay is this many times the previous one... */
export const RETRY_BACKOFF_FACTOR = 3;
/** ...up to this ceiling. */
export const MAX_RETRY_DELAY_MS = 8 * 3600 * 1000;
/** Each delay is scaled by a random factor in [1 - JITTER, 1 + JITTER) so retries of many deliveries spread out. */
export const RETRY_JITTER = 0.2;

/** The nominal delay (without jitter) after failed attempt number `attempt` (1 = the first attempt). */
export function nominalRetryDelayMs(attempt: number): number {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError('attempt must be a positive integer');
  // 3^k overflows nothing below the ceiling; cap the exponent so huge attempt counts stay finite.
  const exponent = Math.min(attempt - 1, 30);
  return Math.min(FIRST_RETRY_DELAY_MS * RETRY_BACKOFF_FACTOR ** exponent, MAX_RETRY_DELAY_MS);
}

/** What to do after a failed attempt: try again at `at`, or give up (the retry window is over). */
export type RetryDecision = { kind: 'retry'; at: Date } | { kind: 'give_up' };

/**
 * After failed attempt `attempt` made at `now`: the next attempt time, jittered, never later than
 * `retryUntil` (so the last attempt happens when the window closes), or give up when the window
 * has closed. `random` is a number in [0, 1).
 */
export function nextRetry(input: {
  attempt: number;
  now: Date;
  retryUntil: Date;
  random: number;
}): RetryDecision {
  const now = input.now.getTime();
  const until = input.retryUntil.getTime();
  if (now >= until) return { kind: 'give_up' };
  const jitter = 1 - RETRY_JITTER + 2 * RETRY_JITTER * input.random;
  const delay = Math.round(nominalRetryDelayMs(input.attempt) * jitter);
  return { kind: 'retry', at: new Date(Math.min(now + delay, until)) };
}

/**
 * The nominal schedule from arming: offsets (ms) of every attempt, the first at 0, the last at
 * the end of the window. Used by docs and tests to show what an integrator can expect.
 */
export function nominalSchedule(): number[] {
  const offsets = [0];
  for (let attempt = 1; ; attempt++) {
    const next = offsets.at(-1)! + nominalRetryDelayMs(attempt);
    if (next >= RETRY_WINDOW_MS) {
      offsets.push(RETRY_WINDOW_MS);
      return offsets;
    }
    offsets.push(next);
  }
}
