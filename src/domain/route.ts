/** Solana's base fee per signature. */
export const LAMPORTS_PER_SIGNATURE = 5_000n;

const MICRO_LAMPORTS_PER_LAMPORT = 1_000_000n;

/** The priority fee of a transaction: its compute-unit limit at a price per unit, rounded up as the runtime does. */
export function priorityFeeLamports(computeUnitLimit: number, microLamportsPerCu: bigint): bigint {
  return (
    (BigInt(computeUnitLimit) * microLamportsPerCu + MICRO_LAMPORTS_PER_LAMPORT - 1n) /
    MICRO_LAMPORTS_PER_LAMPORT
  );
}

/** When a route's steps are due, and until when it may run (unix seconds of the chain's clock). */
export interface RouteSchedule {
  /** Step 0 (hop 1) is due then; step i at `firstReleaseAt + i * intervalSecs`. */
  firstReleaseAt: bigint;
  intervalSecs: number;
  /** After it the route cannot execute and the source may rescue it. */
  deadlineAt: bigint;
}

/**
 * The schedule of a route deployed at `t0` (the chain's clock when prepare builds the route
 * creation): hop k of n is due at `t0 + k * floor(arrivalSeconds / n)`, so the last lands by
 * `t0 + arrivalSeconds`; the deadline is the last hop's due time plus `graceSeconds`.
 */
export function routeSchedule(input: {
  t0: bigint;
  arrivalSeconds: number;
  hops: number;
  graceSeconds: number;
}): RouteSchedule {
  const intervalSecs = Math.floor(input.arrivalSeconds / input.hops);
  const interval = BigInt(intervalSecs);
  return {
    firstReleaseAt: input.t0 + interval,
    intervalSecs,
    deadlineAt: input.t0 + interval * BigInt(input.hops) + BigInt(input.graceSeconds),
  };
}

/**
 * How long the keeper leaves a route after its `attempt`-th failed try (0 the first): 2 s doubling
 * to 5 minutes, the second half of it scaled by `random` in [0, 1) so the retries of many routes
 * spread out.
 */
export function hopRetryDelayMs(attempt: number, random: number): number {
  const base = Math.min(300_000, 2_000 * 2 ** Math.min(attempt, 10));
  return base / 2 + random * (base / 2);
}
