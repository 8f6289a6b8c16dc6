export {
  computeBudgetInstructions,
  computeUnitLimit,
  MAX_COMPUTE_UNIT_LIMIT,
  withMargin,
} from './budget.ts';
export {
  type CallOptions,
  type LandingOptions,
  type LandingOutcome,
  type LandingRpc,
  type LandingStatus,
  landTransaction,
  type SendAnswer,
  type SignedTransaction,
} from './land.ts';
