import {
  type Address,
  appendTransactionMessageInstructions,
  type Base64EncodedWireTransaction,
  type Blockhash,
  compileTransaction,
  createNoopSigner,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getTransactionMessageSize,
  getTransactionSize,
  type Instruction,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  type TransactionError,
} from '@solana/kit';
import { computeBudgetInstructions, MAX_COMPUTE_UNIT_LIMIT } from '@transfer-router/landing';
import type { BlockhashLifetime, CallOptions, TransactionSimulator } from './types.ts';

/** The most bytes a transaction (signatures included) may have without lookup tables. */
export const TRANSACTION_SIZE_LIMIT = 1232;

/** Stands in for a blockhash where only a transaction's size matters (any blockhash has 32 bytes). */
const SIZING_LIFETIME: BlockhashLifetime = {
  blockhash: '11111111111111111111111111111111' as Blockhash,
  lastValidBlockHeight: 0n,
};

/** What a transaction for someone else to sign is made of. */
export interface UnsignedTransaction {
  /** Pays the fees and signs last (a user's wallet): its signature is left empty. */
  feePayer: Address;
  instructions: readonly Instruction[];
  version: 0 | 'legacy';
  lifetime: BlockhashLifetime;
  microLamportsPerCu: bigint;
  computeUnitLimit: number;
}

/** The message of a transaction, its compute-unit price and limit first. */
function messageOf(input: UnsignedTransaction) {
  const budget = computeBudgetInstructions(input);
  return pipe(
    createTransactionMessage({ version: input.version }),
    (message) => setTransactionMessageFeePayerSigner(createNoopSigner(input.feePayer), message),
    (message) => setTransactionMessageLifetimeUsingBlockhash(input.lifetime, message),
    (message) => appendTransactionMessageInstructions([...budget, ...input.instructions], message),
  );
}

/**
 * The size in bytes of a transaction of these instructions once every signature is in, with its
 * compute-unit limit and price instructions (as every transaction the service builds has them).
 */
export function transactionSize(
  input: Pick<UnsignedTransaction, 'feePayer' | 'instructions' | 'version'>,
): number {
  return getTransactionMessageSize(
    messageOf({ ...input, lifetime: SIZING_LIFETIME, microLamportsPerCu: 1n, computeUnitLimit: 1 }),
  );
}

/**
 * The transaction as wire bytes in base64, signed by every signer its instructions carry except
 * the fee payer (fresh account keys, a keeper), whose signature is left for its wallet to add;
 * with the number of signatures it carries once complete.
 */
export async function partiallySigned(
  input: UnsignedTransaction,
): Promise<{ base64: Base64EncodedWireTransaction; signatures: number }> {
  const signed = await partiallySignTransactionMessageWithSigners(messageOf(input));
  return {
    base64: getBase64EncodedWireTransaction(signed),
    signatures: Object.keys(signed.signatures).length,
  };
}

/**
 * What simulating a transaction on the chain as it is now said: its error, or the units it used
 * (if told); `size`, the transaction's bytes once signed. One above the size limit is not sent.
 */
export interface Simulation {
  size: number;
  unitsConsumed: number | null;
  error: TransactionError | null;
}

/**
 * Simulates the transaction on the chain as it is now (signatures not checked, any recent
 * blockhash): the compute units it used, or its error (which may only mean it depends on accounts
 * an earlier transaction of the same bundle creates).
 */
export async function simulate(
  chain: TransactionSimulator,
  input: Omit<UnsignedTransaction, 'computeUnitLimit'>,
  options: CallOptions = {},
): Promise<Simulation> {
  const transaction = compileTransaction(messageOf({ ...input, computeUnitLimit: MAX_COMPUTE_UNIT_LIMIT }));
  const size = getTransactionSize(transaction);
  if (size > TRANSACTION_SIZE_LIMIT) return { size, unitsConsumed: null, error: null };
  const result = await chain.simulateTransaction(getBase64EncodedWireTransaction(transaction), {
    ...options,
    sigVerify: false,
    replaceRecentBlockhash: true,
  });
  if (result.err !== null) return { size, unitsConsumed: null, error: result.err };
  return {
    size,
    unitsConsumed: result.unitsConsumed === null ? null : Number(result.unitsConsumed),
    error: null,
  };
}
