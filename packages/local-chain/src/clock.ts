// The chain's only dependency on time: slots follow `now()`. Any object with that method fits (the
// service's Clock does), so a caller can drive the chain with a manual clock instead of sleeping.

/** Where the chain reads the current time from. */
export interface Clock {
  now(): Date;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => new Date() };
