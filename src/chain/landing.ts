import {
  appendTransactionMessageInstructions,
  type Base64EncodedWireTransaction,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  type Instruction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type TransactionError,
  type TransactionSigner,
} from '@solana/kit';
import {
  computeBudgetInstructions,
  computeUnitLimit,
  type LandingOptions,
  type LandingRpc,
  landTransaction as land,
  type SignedTransaction,
} from '@transfer-router/landing';
import { isChainError } from './errors.ts';
import { simulate } from './transactions.ts';
import type {
  BlockHeightReader,
  BlockhashLifetime,
  SignatureStatusReader,
  TransactionSender,
  TransactionSimulator,
} from './types.ts';

/*
 * The service's senders land transactions through the landing policy of packages/landing (the
 * TypeScript client carries the same code for wallets): this adapts the chain interface to it.
 */

export type { SignedTransaction } from '@transfer-router/landing';

/** What became of a transaction: it landed and succeeded (null), it failed or was refused (its error), or expired unlanded. */
export type LandingOutcome = TransactionError | 'expired' | null;

type LandingChain = TransactionSender & SignatureStatusReader & BlockHeightReader;

/** The landing policy's view of the chain interface, whose ChainError codes say what a failure means. */
function landingRpcOf(chain: LandingChain): LandingRpc<TransactionError> {
  return {
    async sendTransaction(base64, options) {
      try {
        await chain.sendTransaction(base64 as Base64EncodedWireTransaction, options);
        return 'sent';
      } catch (error) {
        if (isChainError(error, 'CHAIN_PREFLIGHT_FAILED') && error.context.transactionError) {
          return { refused: error.context.transactionError };
        }
        if (isChainError(error, 'CHAIN_BLOCKHASH_NOT_FOUND')) return 'blockhash_not_found';
        throw error;
      }
    },
    async getSignatureStatus(signature, options) {
      const [status] = await chain.getSignatureStatuses([signature], options);
      return status ?? null;
    },
    getBlockHeight: (options) => chain.getBlockHeight(options),
    isWeather: (error) => isChainError(error) && error.retryable,
  };
}

/**
 * Sends a signed transaction and waits until it is confirmed or its blockhash expired, sending the
 * same bytes again meanwhile. A refusal in preflight counts as landing with that error: nothing
 * was charged.
 */
export async function landTransaction(
  chain: LandingChain,
  transaction: SignedTransaction,
  options: LandingOptions & { now: () => number },
): Promise<LandingOutcome> {
  const outcome = await land(landingRpcOf(chain), transaction, options);
  if (outcome.kind === 'landed') return null;
  if (outcome.kind === 'expired') return 'expired';
  return outcome.kind === 'failed' ? outcome.error : outcome.refusal;
}

/**
 * Signs a transaction paid by `payer`, its compute-budget instructions first and its compute-unit
 * limit what simulating it used plus a margin; when the simulation tells nothing (it failed, e.g.
 * a step is not due yet on the node's clock), the limit is `fallbackUnits`. The price may depend
 * on the limit (a budget in lamports divided by it).
 */
export async function signWithBudget(
  chain: TransactionSimulator,
  payer: TransactionSigner,
  input: {
    lifetime: BlockhashLifetime;
    instructions: readonly Instruction[];
    microLamportsPerCu: bigint | ((computeUnitLimit: number) => bigint);
    fallbackUnits: number;
  },
): Promise<SignedTransaction> {
  const { lifetime, instructions } = input;
  // The price changes nothing the simulation measures; at the simulation's maximal limit it would
  // only ask the payer for a fee it never pays.
  const simulated = await simulate(chain, {
    feePayer: payer.address,
    instructions,
    version: 0,
    lifetime,
    microLamportsPerCu: 0n,
  });
  const limit = computeUnitLimit(simulated.unitsConsumed, input.fallbackUnits);
  const microLamportsPerCu =
    typeof input.microLamportsPerCu === 'bigint' ? input.microLamportsPerCu : input.microLamportsPerCu(limit);
  const budget = computeBudgetInstructions({ microLamportsPerCu, computeUnitLimit: limit });
  const transaction = await pipe(
    createTransactionMessage({ version: 0 }),
    (message) => setTransactionMessageFeePayerSigner(payer, message),
    (message) => setTransactionMessageLifetimeUsingBlockhash(lifetime, message),
    (message) => appendTransactionMessageInstructions([...budget, ...instructions], message),
    (message) => signTransactionMessageWithSigners(message),
  );
  return {
    base64: getBase64EncodedWireTransaction(transaction),
    signature: getSignatureFromTransaction(transaction),
    validUntil: lifetime.lastValidBlockHeight,
  };
}
