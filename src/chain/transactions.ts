import {
  type Address,
  appendTransactionMessageInstructions,
  type Base64EncodedWireTransaction,
  compileTransaction,
  createNoopSigner,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  type Instruction,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
} from '@solana/kit';
import {
  setTransactionMessageComputeUnitPrice,
  updateOrAppendSetComputeUnitLimitInstruction,
} from '@solana-program/compute-budget';
import type { BlockhashLifetime, CallOptions, TransactionSimulator } from './types.ts';

/** Largest compute-unit limit a transaction may ask for. */
const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;

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

/** The message of a transaction, with its compute-unit limit and price. */
function messageOf(input: UnsignedTransaction) {
  return pipe(
    createTransactionMessage({ version: input.version }),
    (message) => setTransactionMessageFeePayerSigner(createNoopSigner(input.feePayer), message),
    (message) => setTransactionMessageLifetimeUsingBlockhash(input.lifetime, message),
    (message) => appendTransactionMessageInstructions(input.instructions, message),
    (message) => setTransactionMessageComputeUnitPrice(input.microLamportsPerCu, message),
    (message) => updateOrAppendSetComputeUnitLimitInstruction(input.computeUnitLimit, message),
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
 * The compute units the transaction needs, measured by simulating it on the chain as it is now
 * (signatures not checked, any recent blockhash), or null when it cannot run yet (it depends on
 * accounts an earlier transaction of the same bundle creates).
 */
export async function simulatedComputeUnits(
  chain: TransactionSimulator,
  input: Omit<UnsignedTransaction, 'computeUnitLimit'>,
  options: CallOptions = {},
): Promise<number | null> {
  const transaction = compileTransaction(messageOf({ ...input, computeUnitLimit: MAX_COMPUTE_UNIT_LIMIT }));
  const result = await chain.simulateTransaction(getBase64EncodedWireTransaction(transaction), {
    ...options,
    sigVerify: false,
    replaceRecentBlockhash: true,
  });
  return result.err === null && result.unitsConsumed !== null ? Number(result.unitsConsumed) : null;
}
