import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  type Instruction,
  pipe,
  type Signature,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type TransactionSigner,
} from '@solana/kit';
import { landTransaction } from '../chain/landing.ts';
import { describeTransactionError as describeError } from '../chain/router/errors.ts';
import type {
  BlockHeightReader,
  BlockhashReader,
  SignatureStatusReader,
  TransactionSender,
} from '../chain/types.ts';

/** What sending a platform transaction asks of the chain. */
export type TransactionChain = BlockhashReader &
  BlockHeightReader &
  TransactionSender &
  SignatureStatusReader;

/** A platform transaction that the chain refused, or that failed or expired before confirmation. */
export class PlatformTransactionError extends Error {
  override name = 'PlatformTransactionError';
}

/**
 * Signs one transaction of `instructions` paid by `payer` and lands it (src/chain/landing.ts): the
 * same bytes sent again every couple of seconds until the chain confirms them, or their blockhash
 * expired unlanded. Throws a PlatformTransactionError when the chain refused, failed or never
 * confirmed it.
 */
export async function sendAndConfirm(
  chain: TransactionChain,
  payer: TransactionSigner,
  instructions: readonly Instruction[],
  options: { signal?: AbortSignal; pollMs?: number } = {},
): Promise<Signature> {
  const { signal } = options;
  const lifetime = await chain.getLatestBlockhash({ signal });
  const transaction = await pipe(
    createTransactionMessage({ version: 0 }),
    (message) => setTransactionMessageFeePayerSigner(payer, message),
    (message) => setTransactionMessageLifetimeUsingBlockhash(lifetime, message),
    (message) => appendTransactionMessageInstructions(instructions, message),
    (message) => signTransactionMessageWithSigners(message),
  );
  const signature = getSignatureFromTransaction(transaction);
  const outcome = await landTransaction(
    chain,
    {
      base64: getBase64EncodedWireTransaction(transaction),
      signature,
      validUntil: lifetime.lastValidBlockHeight,
    },
    { now: Date.now, pollMs: options.pollMs ?? 500, ...(signal ? { signal } : {}) },
  );
  if (outcome === 'expired') {
    throw new PlatformTransactionError(`transaction ${signature} expired before it was confirmed`);
  }
  if (outcome !== null) {
    throw new PlatformTransactionError(`transaction ${signature} failed: ${describeError(outcome)}`);
  }
  return signature;
}
