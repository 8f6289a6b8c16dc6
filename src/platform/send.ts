import type { Instruction, Signature, TransactionSigner } from '@solana/kit';
import { landTransaction, signWithBudget } from '../chain/landing.ts';
import { describeTransactionError as describeError } from '../chain/router/errors.ts';
import type {
  BlockHeightReader,
  BlockhashReader,
  SignatureStatusReader,
  TransactionSender,
  TransactionSimulator,
} from '../chain/types.ts';

/** What sending a platform transaction asks of the chain. */
export type TransactionChain = BlockhashReader &
  BlockHeightReader &
  TransactionSender &
  TransactionSimulator &
  SignatureStatusReader;

/** A platform transaction that the chain refused, or that failed or expired before confirmation. */
export class PlatformTransactionError extends Error {
  override name = 'PlatformTransactionError';
  /** It expired unlanded: nothing of it happened, and the same instructions may be sent again. */
  readonly expired: boolean;
  constructor(message: string, expired = false) {
    super(message);
    this.expired = expired;
  }
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
  options: { signal?: AbortSignal; pollMs?: number; microLamportsPerCu?: bigint } = {},
): Promise<Signature> {
  const { signal } = options;
  const lifetime = await chain.getLatestBlockhash({ signal });
  // No priority fee unless asked for; a transaction that cannot be simulated gets the runtime's
  // default budget of one instruction, which it would have had without a limit.
  const transaction = await signWithBudget(chain, payer, {
    lifetime,
    instructions,
    microLamportsPerCu: options.microLamportsPerCu ?? 0n,
    fallbackUnits: 200_000,
  });
  const signature = transaction.signature as Signature;
  const outcome = await landTransaction(chain, transaction, {
    now: Date.now,
    pollMs: options.pollMs ?? 500,
    ...(signal ? { signal } : {}),
  });
  if (outcome === 'expired') {
    throw new PlatformTransactionError(`transaction ${signature} expired before it was confirmed`, true);
  }
  if (outcome !== null) {
    throw new PlatformTransactionError(`transaction ${signature} failed: ${describeError(outcome)}`);
  }
  return signature;
}
