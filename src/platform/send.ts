import { setTimeout as delay } from 'node:timers/promises';
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
import { isChainError } from '../chain/errors.ts';
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
 * Signs one transaction of `instructions` paid by `payer`, sends it and waits until the chain
 * confirms it, polling its status: the chain interface has no subscriptions, which kit's
 * sendAndConfirm factory needs. Gives up once the transaction's blockhash has expired.
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
  try {
    await chain.sendTransaction(getBase64EncodedWireTransaction(transaction), { signal });
  } catch (error) {
    if (!isChainError(error, 'CHAIN_PREFLIGHT_FAILED')) throw error;
    throw new PlatformTransactionError(
      `the chain refused the transaction: ${describeError(error.context.transactionError)}`,
      { cause: error },
    );
  }
  for (;;) {
    const [status] = await chain.getSignatureStatuses([signature], { signal });
    if (status?.err)
      throw new PlatformTransactionError(`transaction ${signature} failed: ${describeError(status.err)}`);
    if (status?.confirmationStatus === 'confirmed' || status?.confirmationStatus === 'finalized')
      return signature;
    if ((await chain.getBlockHeight({ signal })) > lifetime.lastValidBlockHeight)
      throw new PlatformTransactionError(`transaction ${signature} expired before it was confirmed`);
    await delay(options.pollMs ?? 500, undefined, { signal });
  }
}
