/** Source of the current time; injected everywhere so tests control time without sleeping. */
export interface Clock {
  now(): Date;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => new Date() };

/** A clock that moves only when told to; for tests and simulations. */
export function createManualClock(start: Date = new Date('2026-01-01T00:00:00Z')) {
  let current = start.getTime();
  return {
    now: () => new Date(current),
    set(to: Date) {
      current = to.getTime();
    },
    advance(ms: number) {
      current += ms;
    },
  };
}
