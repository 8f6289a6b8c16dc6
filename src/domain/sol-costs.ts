/**
 * The SOL a source wallet needs up front to deploy a route, itemised as the fee estimate shows it.
 * The figures come from real rent and real account sizes; this module only adds them up.
 */
export interface SolBreakdown {
  routeInitRentLamports: bigint;
  orchestratorRentLamports: bigint;
  ataRentLamports: bigint;
  transactionFeesLamports: bigint;
  priorityFeesLamports: bigint;
  protocolFlatFeeLamports: bigint;
}

export interface SolCosts {
  breakdown: SolBreakdown;
  /** What rent reclaim gives back after settlement. */
  refundableLamports: bigint;
}

/** Totals of a breakdown: up-front requirement is the sum of the six items; net cost is what stays spent. */
export function summariseSolCosts(costs: SolCosts) {
  const b = costs.breakdown;
  const requiredSolUpFrontLamports =
    b.routeInitRentLamports +
    b.orchestratorRentLamports +
    b.ataRentLamports +
    b.transactionFeesLamports +
    b.priorityFeesLamports +
    b.protocolFlatFeeLamports;
  if (costs.refundableLamports > requiredSolUpFrontLamports) {
    throw new RangeError('refundable lamports cannot exceed what is paid up front');
  }
  return {
    requiredSolUpFrontLamports,
    breakdown: b,
    refundableLamports: costs.refundableLamports,
    netCostLamports: requiredSolUpFrontLamports - costs.refundableLamports,
  };
}
