import type { Signature } from '@solana/kit';
import type { CallOptions, ChainTransaction, TransactionReader } from '../chain/types.ts';
import type { ErrorCode } from '../domain/errors.ts';

/** Why a reported signature does not count, with the code it answers to. */
export interface SignatureProblem {
  code: Extract<ErrorCode, 'MH_036' | 'MH_037'>;
  message: string;
}

/**
 * The transaction a reported signature names, when it landed and succeeded on chain; otherwise why
 * it does not count: not found (MH_036) or failed (MH_037), each saying what to do next.
 */
export async function landedTransaction(
  chain: TransactionReader,
  signature: Signature,
  options: CallOptions = {},
): Promise<
  { transaction: ChainTransaction; problem: null } | { transaction: null; problem: SignatureProblem }
> {
  const transaction = await chain.getTransaction(signature, options);
  if (!transaction) {
    const message = `Transaction ${signature} was not found on chain. Broadcast it and wait for its confirmation; once its blockhash has expired, prepare again for a fresh bundle.`;
    return { transaction: null, problem: { code: 'MH_036', message } };
  }
  if (transaction.err !== null) {
    const message = `Transaction ${signature} failed on chain (${JSON.stringify(transaction.err)}). Prepare again: the new bundle covers what is left.`;
    return { transaction: null, problem: { code: 'MH_037', message } };
  }
  return { transaction, problem: null };
}

/** Whether a transaction landed and succeeded on chain (null), or why not. */
export async function landedProblem(
  chain: TransactionReader,
  signature: Signature,
  options: CallOptions = {},
): Promise<SignatureProblem | null> {
  return (await landedTransaction(chain, signature, options)).problem;
}
