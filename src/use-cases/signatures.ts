import { setTimeout as delay } from 'node:timers/promises';
import type { Signature } from '@solana/kit';
import type {
  CallOptions,
  ChainTransaction,
  SignatureStatusReader,
  TransactionReader,
} from '../chain/types.ts';
import type { ErrorCode } from '../domain/errors.ts';

/** Why a reported signature does not count, with the code it answers to. */
export interface SignatureProblem {
  code: Extract<ErrorCode, 'MH_036' | 'MH_037'>;
  message: string;
}

/** What looking up a reported signature reads. */
export type SignatureLookup = TransactionReader & SignatureStatusReader;

/**
 * How long a signature the node has no status for is looked for again: the source confirmed it on
 * its own RPC node, which may be a few slots ahead of the service's.
 */
const UNSEEN_GRACE_MS = 2_000;
const LOOK_AGAIN_MS = 400;

/**
 * The confirmed transaction a signature names, or null when the node has no status for it even
 * after the grace. One the node shows only `processed` (its block not yet confirmed there) is
 * waited for until the call's signal ends it: it is moments from confirmed.
 */
async function confirmedTransaction(
  chain: SignatureLookup,
  signature: Signature,
  options: CallOptions,
): Promise<ChainTransaction | null> {
  const grace = AbortSignal.timeout(UNSEEN_GRACE_MS);
  for (;;) {
    const transaction = await chain.getTransaction(signature, options);
    if (transaction) return transaction;
    const [status] = await chain.getSignatureStatuses([signature], {
      ...options,
      searchTransactionHistory: true,
    });
    if (!status && grace.aborted) return null;
    await delay(LOOK_AGAIN_MS, undefined, options.signal ? { signal: options.signal } : {});
  }
}

/**
 * The transaction a reported signature names, when it landed and succeeded on chain; otherwise why
 * it does not count: not found (MH_036) or failed (MH_037), each saying what to do next.
 */
export async function landedTransaction(
  chain: SignatureLookup,
  signature: Signature,
  options: CallOptions = {},
): Promise<
  { transaction: ChainTransaction; problem: null } | { transaction: null; problem: SignatureProblem }
> {
  const transaction = await confirmedTransaction(chain, signature, options);
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
  chain: SignatureLookup,
  signature: Signature,
  options: CallOptions = {},
): Promise<SignatureProblem | null> {
  return (await landedTransaction(chain, signature, options)).problem;
}
