import {
  type Address,
  appendTransactionMessageInstructions,
  type Blockhash,
  createTransactionMessage,
  type Instruction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  type TransactionSigner,
} from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import {
  getCloseAccountInstruction,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeAccount3Instruction,
  getTokenSize,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { computeBudgetInstructions } from './landing/index.ts';
import {
  type ChainRecoveryKind,
  getRecoveryInstruction,
  liveTokenAccounts,
  MAX_CLOSES_PER_RECOVERY,
  type RouteAccount,
} from './router.ts';

/*
 * The transactions of a recovery from the chain, as the service's bundles make them: which
 * accounts each closes, what comes before and after the router's instruction, the compute budget.
 */

/** What a plan needs to know of the chain besides the route. */
export interface RecoveryPlanInput {
  kind: ChainRecoveryKind;
  programAddress: Address;
  source: TransactionSigner;
  routeAddress: Address;
  route: RouteAccount;
  orchestrator: Address;
  /** The route's live step states, in order. */
  steps: readonly Address[];
  /** Close the orchestrator config with the last transaction: no other route of the source is open. */
  closeOrchestrator: boolean;
  /** Where the tokens go: the source's associated token account, or the fresh one native SOL is unwrapped from. */
  sourceToken: Address;
  /** Open the source's associated token account first (tokens come back and it has none). */
  openSourceToken: boolean;
  /** Native SOL: a fresh token account of the source's receives the wrapped SOL and closes in the same transaction. */
  unwrap: { holder: TransactionSigner; rent: bigint } | null;
}

/**
 * Compute units of each part, for when simulation cannot measure a transaction: the service's
 * figures, measured on the legacy SPL Token program (a `Rescue` or `Reclaim` of 12 accounts used
 * 55,424), whose token instructions cost far more than p-token's.
 */
export const FALLBACK_UNITS = { recovery: 70_000, openTokenAccount: 35_000, unwrap: 10_000 } as const;

/** One planned transaction: its instructions (compute budget excepted) and a fallback compute-unit limit. */
export interface PlannedTransaction {
  instructions: Instruction[];
  fallbackUnits: number;
}

/**
 * The recovery's transactions, as the service plans them: every live account of the route closed,
 * token accounts first (their tokens go to `sourceToken` in the first transaction), 12 accounts
 * per transaction, the route with the last of them and the orchestrator config too when asked.
 */
export function planChainRecovery(input: RecoveryPlanInput): PlannedTransaction[] {
  const closes = [...liveTokenAccounts(input.route), ...input.steps];
  const chunks =
    closes.length === 0
      ? [[]]
      : Array.from({ length: Math.ceil(closes.length / MAX_CLOSES_PER_RECOVERY) }, (_, i) =>
          closes.slice(i * MAX_CLOSES_PER_RECOVERY, (i + 1) * MAX_CLOSES_PER_RECOVERY),
        );
  return chunks.map((close, index) => {
    const first = index === 0;
    const recovery = getRecoveryInstruction({
      kind: input.kind,
      programAddress: input.programAddress,
      source: input.source,
      route: input.routeAddress,
      orchestrator: input.orchestrator,
      sourceToken: input.sourceToken,
      close,
      closeOrchestrator: input.closeOrchestrator && index === chunks.length - 1,
    });
    const before: Instruction[] = [];
    const after: Instruction[] = [];
    let fallbackUnits = FALLBACK_UNITS.recovery;
    if (first && input.openSourceToken) {
      before.push(
        getCreateAssociatedTokenIdempotentInstruction({
          payer: input.source,
          ata: input.sourceToken,
          owner: input.source.address,
          mint: input.route.mint,
        }),
      );
      fallbackUnits += FALLBACK_UNITS.openTokenAccount;
    }
    if (first && input.unwrap) {
      const { holder, rent } = input.unwrap;
      before.push(
        getCreateAccountInstruction({
          payer: input.source,
          newAccount: holder,
          lamports: rent,
          space: getTokenSize(),
          programAddress: TOKEN_PROGRAM_ADDRESS,
        }),
        getInitializeAccount3Instruction({
          account: holder.address,
          mint: input.route.mint,
          owner: input.source.address,
        }),
      );
      // Closing is how SPL Token unwraps: the holder's rent and the SOL go to the wallet at once.
      after.push(
        getCloseAccountInstruction({
          account: holder.address,
          destination: input.source.address,
          owner: input.source,
        }),
      );
      fallbackUnits += FALLBACK_UNITS.unwrap;
    }
    return { instructions: [...before, recovery, ...after], fallbackUnits };
  });
}

/**
 * A transaction's message with its compute budget first: a compute-budget instruction after the
 * router's would reset the return data that reports what came back.
 */
export function recoveryTransactionMessage(input: {
  signer: TransactionSigner;
  instructions: readonly Instruction[];
  lifetime: { blockhash: Blockhash; lastValidBlockHeight: bigint };
  computeUnits: number;
  computeUnitPrice: bigint | undefined;
}) {
  const budget = computeBudgetInstructions({
    microLamportsPerCu: input.computeUnitPrice ?? 0n,
    computeUnitLimit: input.computeUnits,
  });
  return pipe(
    createTransactionMessage({ version: 0 }),
    (message) => setTransactionMessageFeePayerSigner(input.signer, message),
    (message) => setTransactionMessageLifetimeUsingBlockhash(input.lifetime, message),
    (message) => appendTransactionMessageInstructions([...budget, ...input.instructions], message),
  );
}
