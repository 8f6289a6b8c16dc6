/*
 * How much each transaction of a route's bundle holds. Every transaction fits the 1,232-byte limit
 * without lookup tables, with both compute-budget instructions: the route's creation, which may
 * also create the platform's fee account and wrap SOL, is measured and holds as many intermediate
 * accounts as fit (at most the count below); the other groups hold the counts below, which fit in
 * every case (src/chain/router/bundle.test.ts checks every combination, bench/program.ts reports
 * the sizes).
 */

/** Intermediate accounts the CreateRoute transaction creates at most (each adds a signature). */
export const MAX_HOPS_IN_CREATE_ROUTE_TX = 5;
/**
 * The same on a native-mint route, whose CreateRoute transaction also wraps the source's SOL (and
 * closes the wrapped-SOL account it opened): one intermediate account fewer leaves room for that.
 */
export const MAX_HOPS_IN_NATIVE_CREATE_ROUTE_TX = 4;

/** Intermediate accounts the CreateRoute transaction of a route on this mint creates when nothing else shares it. */
export function hopsInCreateRoute(native: boolean): number {
  return native ? MAX_HOPS_IN_NATIVE_CREATE_ROUTE_TX : MAX_HOPS_IN_CREATE_ROUTE_TX;
}
/** Intermediate accounts created by one AddHops transaction. */
export const MAX_HOPS_IN_ADD_HOPS_TX = 8;
/** Step states created by one session-init transaction. */
export const MAX_STEPS_IN_INIT_STEPS_TX = 10;
/** Accounts closed by one rescue or reclaim transaction. */
export const MAX_CLOSES_IN_RECOVERY_TX = 12;

/** Splits `items` into transactions of at most `size` each. */
export const chunk = <T>(items: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));
