// Copied from packages/landing/src/index.ts by `npm run generate:client`. Do not edit: change
// the package and run it again (a test fails while this copy differs from it).

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
