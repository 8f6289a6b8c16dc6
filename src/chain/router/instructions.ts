/*
 * Instruction builders of the router program. Accounts that must sign take a `TransactionSigner`
 * (use kit's `createNoopSigner` for a wallet that signs elsewhere, such as the user's); the
 * instruction then carries the signer so `signTransactionMessageWithSigners` and
 * `partiallySignTransactionMessageWithSigners` find it. Account order is the program's.
 *
 * One module per family of instructions, under instructions/; this one names them all.
 */

export { getInitConfigInstruction, getUpdateConfigInstruction } from './instructions/config.ts';
export {
  getAddHopsInstruction,
  getCreateRouteInstruction,
  getInitOrchestratorInstruction,
  getInitStepsInstruction,
  type RouteTerms,
} from './instructions/deployment.ts';
export { RouterInstruction } from './instructions/encoding.ts';
export {
  type ExecuteStepAccounts,
  getExecuteStepAccounts,
  getExecuteStepInstruction,
  getMarkFailedInstruction,
  getScreenRouteInstruction,
  type ScreeningVerdict,
} from './instructions/execution.ts';
export {
  getCloseOrchestratorInstruction,
  getReclaimInstruction,
  getRescueInstruction,
  type RecoverInput,
} from './instructions/recovery.ts';
export { getWithdrawLamportsInstruction, getWithdrawTokensInstruction } from './instructions/withdrawals.ts';
