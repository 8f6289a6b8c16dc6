import { LAMPORTS_PER_SIGNATURE, priorityFeeLamports } from './route.ts';

/*
 * What the service offers per compute unit to land its transactions, and what a route's keeper may
 * spend: the market's price read from recent fees, raised each time a transaction expires
 * unlanded, never above the cap, and for the keeper within the route's fee budget, which the
 * bundle funds and which returns to the source unspent (docs/operations.md, "Priority fees").
 * Prices are in micro-lamports per compute unit.
 */

/** How the service prices compute units: configured floor and cap, and how much escalation a route's budget allows. */
export interface PriorityFeePolicy {
  /** PRIORITY_FEE_MICROLAMPORTS_PER_CU: the least price a transaction offers. */
  floorMicroLamportsPerCu: bigint;
  /** PRIORITY_FEE_CAP_MICROLAMPORTS_PER_CU: the most. */
  capMicroLamportsPerCu: bigint;
  /** HOP_PRIORITY_BUDGET_MULTIPLIER: a route's hops are funded at this many times their starting price. */
  hopBudgetMultiplier: number;
}

/** The least raise after a transaction expired unlanded, so that one priced at nothing still climbs. */
export const ESCALATION_STEP_MICRO_LAMPORTS_PER_CU = 10_000n;

const min = (a: bigint, b: bigint) => (a < b ? a : b);
const max = (a: bigint, b: bigint) => (a > b ? a : b);

/** One recent slot's lowest price, as getRecentPrioritizationFees lists it. */
export interface SlotPrice {
  slot: bigint;
  prioritizationFee: bigint;
}

/**
 * The market's price: the 75th percentile of the prices recent slots paid (as
 * getRecentPrioritizationFees lists them), or, when higher, the latest slot's (congestion now: a
 * transaction priced below the going rate waits until the congestion passes, however calm the
 * slots before were, so the price follows it from its first slot); at least the floor, at most the
 * cap.
 */
export function marketPrice(
  recent: readonly SlotPrice[],
  policy: Pick<PriorityFeePolicy, 'floorMicroLamportsPerCu' | 'capMicroLamportsPerCu'>,
): bigint {
  const ascending = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);
  const prices = recent.map((entry) => entry.prioritizationFee).sort(ascending);
  const observed = prices[Math.min(prices.length - 1, Math.floor(0.75 * prices.length))] ?? 0n;
  const latest = recent.reduce<SlotPrice | undefined>(
    (found, entry) => (found && found.slot >= entry.slot ? found : entry),
    undefined,
  );
  const now = latest?.prioritizationFee ?? 0n;
  return min(max(max(observed, now), policy.floorMicroLamportsPerCu), policy.capMicroLamportsPerCu);
}

/** The least price of the attempt after one at `price` expired unlanded: doubled, a step up at least, at most the cap. */
export function escalatedPrice(price: bigint, capMicroLamportsPerCu: bigint): bigint {
  return min(max(price * 2n, price + ESCALATION_STEP_MICRO_LAMPORTS_PER_CU), capMicroLamportsPerCu);
}

/**
 * The price a route's fee budget pays each of its hops at: `hopBudgetMultiplier` times the price
 * they start at (an escalation step at least, so that a route priced at nothing can still climb),
 * at most the cap. Hops that land at their starting price leave most of it unspent.
 */
export function hopBudgetPrice(
  startingPrice: bigint,
  policy: Pick<PriorityFeePolicy, 'capMicroLamportsPerCu' | 'hopBudgetMultiplier'>,
): bigint {
  const base = max(startingPrice, ESCALATION_STEP_MICRO_LAMPORTS_PER_CU);
  return min(base * BigInt(policy.hopBudgetMultiplier), policy.capMicroLamportsPerCu);
}

/** The size of a route's fee budget: its hops, the compute units a hop may use, the budget's price. */
export interface HopBudget {
  hops: number;
  hopComputeUnitLimit: number;
  budgetMicroLamportsPerCu: bigint;
}

/** The priority-fee part of a route's fee budget: each hop, and one more, at the budget's price. */
export function hopPriorityBudgetLamports(budget: HopBudget): bigint {
  return (
    BigInt(budget.hops + 1) * priorityFeeLamports(budget.hopComputeUnitLimit, budget.budgetMicroLamportsPerCu)
  );
}

/**
 * What the keeper may spend on fees over a route: for each hop and one more (a retried hop or the
 * MarkFailed that gives up on the route), its signature fee and the priority fee at the budget's
 * price (decisions, "Keeper funding").
 */
export function hopFeeBudgetLamports(budget: HopBudget): bigint {
  return BigInt(budget.hops + 1) * LAMPORTS_PER_SIGNATURE + hopPriorityBudgetLamports(budget);
}

/** What the keeper is funded with: the rent-exempt minimum of a system account and the route's fee budget. */
export function keeperFundingLamports(input: HopBudget & { rentExemptMinimum: bigint }): bigint {
  return input.rentExemptMinimum + hopFeeBudgetLamports(input);
}

/** What prices one of the keeper's transactions (see {@link keeperTransactionPrice}). */
export interface KeeperPricing {
  /** The market's price for the accounts it writes ({@link marketPrice}). */
  market: bigint;
  /** The least it offers: escalated from an attempt that expired unlanded, else 0. */
  least: bigint;
  capMicroLamportsPerCu: bigint;
  computeUnitLimit: number;
  /** The route's fee budget ({@link hopFeeBudgetLamports}) and what its transactions paid so far. */
  budgetLamports: bigint;
  spentLamports: bigint;
  /** Signatures the budget must still pay for after this transaction: the remaining hops' and MarkFailed's. */
  reservedSignatures: number;
}

/**
 * The price of one of the keeper's transactions: the market's or the escalated one, whichever is
 * higher, at most the cap, and at most what keeps the route's fees within its budget: what was
 * spent, this transaction's fee and the signature fees still to come. Below the floor when the
 * budget says so: the keeper never spends past it.
 */
export function keeperTransactionPrice(input: KeeperPricing): bigint {
  const wanted = min(max(input.market, input.least), input.capMicroLamportsPerCu);
  const left =
    input.budgetLamports -
    input.spentLamports -
    LAMPORTS_PER_SIGNATURE * BigInt(1 + input.reservedSignatures);
  if (left <= 0n) return 0n;
  // Rounded down, so that the fee, rounded up by the runtime, stays within what is left.
  const affordable = (left * 1_000_000n) / BigInt(input.computeUnitLimit);
  return min(wanted, affordable);
}
