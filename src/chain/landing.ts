import { setTimeout as delay } from 'node:timers/promises';
import {
  appendTransactionMessageInstructions,
  type Base64EncodedWireTransaction,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  type Instruction,
  pipe,
  type Signature,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type TransactionError,
  type TransactionSigner,
} from '@solana/kit';
import {
  setTransactionMessageComputeUnitPrice,
  updateOrAppendSetComputeUnitLimitInstruction,
} from '@solana-program/compute-budget';
import { isChainError } from './errors.ts';
import { simulate, withMargin } from './transactions.ts';
import type {
  BlockHeightReader,
  BlockhashLifetime,
  CallOptions,
  SignatureStatus,
  SignatureStatusReader,
  TransactionSender,
  TransactionSimulator,
} from './types.ts';

/*
 * How the service lands a transaction it signed, the way production senders do: the same signed
 * bytes are sent again every couple of seconds while their blockhash lives (an RPC node or leader
 * may drop them at any point), a transaction counts as landed only once `confirmed` (a `processed`
 * one may sit on a fork that is dropped), and it is given up only once its last valid block height
 * has passed and the chain's whole history does not have it.
 */

/** A signed transaction, kept as sent so that the very same bytes can be sent again. */
export interface SignedTransaction {
  base64: string;
  signature: string;
  /** The last block height at which its blockhash is accepted. */
  validUntil: bigint;
}

/** What became of a transaction: it landed and succeeded (null), landed and failed (its error), or expired unlanded. */
export type LandingOutcome = TransactionError | 'expired' | null;

export interface LandingOptions extends CallOptions {
  /** The time now in milliseconds (the service's clock), which paces re-sending. */
  now: () => number;
  /** How often the same bytes are sent again while unconfirmed (default 2 s). */
  resendMs?: number | undefined;
  /** How often the status is read (default 400 ms). */
  pollMs?: number | undefined;
  /**
   * The bytes may have been sent before (by a process that died): a refusal of this first send is
   * then no verdict on them either, and their status says what became of them.
   */
  resumed?: boolean | undefined;
  /** Called once the bytes are out: the node took them (or, resumed, had them already). */
  onSent?: (() => void) | undefined;
}

type LandingChain = TransactionSender & SignatureStatusReader & BlockHeightReader;

const settled = (status: SignatureStatus | null | undefined): status is SignatureStatus =>
  status?.confirmationStatus === 'confirmed' || status?.confirmationStatus === 'finalized';

/**
 * Sends a signed transaction and waits until it is confirmed or its blockhash expired, sending the
 * same bytes again every `resendMs` meanwhile (sending bytes that landed already is harmless). A
 * refusal in preflight counts as landing with that error: nothing was charged.
 */
export async function landTransaction(
  chain: LandingChain,
  transaction: SignedTransaction,
  options: LandingOptions,
): Promise<LandingOutcome> {
  const { signal } = options;
  const refused = await send(chain, transaction, { signal });
  if (refused && !options.resumed) return refused;
  options.onSent?.();
  const signature = transaction.signature as Signature;
  let sentAt = options.now();
  for (;;) {
    const [status] = await chain.getSignatureStatuses([signature], { signal });
    if (settled(status)) return status.err;
    if ((await chain.getBlockHeight({ signal })) > transaction.validUntil) {
      // It may have landed in its last valid block, after the status above was read.
      const [last] = await chain.getSignatureStatuses([signature], {
        signal,
        searchTransactionHistory: true,
      });
      if (settled(last)) return last.err;
      if (!last) return 'expired';
      // Processed but not confirmed yet: its block is confirmed or dropped within moments.
    } else if (options.now() - sentAt >= (options.resendMs ?? 2_000)) {
      // The node took these bytes before: a refusal now (the state moved on, or they landed), or a
      // node throttling or down for a moment, is no verdict on them; their status says what became
      // of them.
      await send(chain, transaction, { signal }).catch((error: unknown) => {
        if (!isChainError(error) || !error.retryable) throw error;
      });
      sentAt = options.now();
    }
    await delay(options.pollMs ?? 400, undefined, { signal });
  }
}

/**
 * Sends the bytes once: null when the node took them (or said their blockhash is gone, which the
 * status and block height then settle), or the transaction's error when preflight refused it.
 */
async function send(
  chain: TransactionSender,
  transaction: SignedTransaction,
  options: CallOptions,
): Promise<TransactionError | null> {
  try {
    await chain.sendTransaction(transaction.base64 as Base64EncodedWireTransaction, options);
    return null;
  } catch (error) {
    if (isChainError(error, 'CHAIN_PREFLIGHT_FAILED') && error.context.transactionError) {
      return error.context.transactionError;
    }
    if (isChainError(error, 'CHAIN_BLOCKHASH_NOT_FOUND')) return null;
    throw error;
  }
}

/**
 * Signs a transaction paid by `payer`, its compute-budget instructions first (a trailing one would
 * erase its return data) and its compute-unit limit what simulating it used plus a margin: no
 * fixed figure that a token program's version could break. When the simulation tells nothing (it
 * failed, e.g. a step is not due yet on the node's clock), the limit is `fallbackUnits`.
 */
export async function signWithBudget(
  chain: TransactionSimulator,
  payer: TransactionSigner,
  input: {
    lifetime: BlockhashLifetime;
    instructions: readonly Instruction[];
    microLamportsPerCu: bigint;
    fallbackUnits: number;
  },
): Promise<SignedTransaction> {
  const { lifetime, instructions, microLamportsPerCu } = input;
  const simulated = await simulate(chain, {
    feePayer: payer.address,
    instructions,
    version: 0,
    lifetime,
    microLamportsPerCu,
  });
  const computeUnitLimit =
    simulated.unitsConsumed === null ? input.fallbackUnits : withMargin(simulated.unitsConsumed);
  const transaction = await pipe(
    createTransactionMessage({ version: 0 }),
    (message) => setTransactionMessageFeePayerSigner(payer, message),
    (message) => setTransactionMessageLifetimeUsingBlockhash(lifetime, message),
    (message) => setTransactionMessageComputeUnitPrice(microLamportsPerCu, message),
    (message) => updateOrAppendSetComputeUnitLimitInstruction(computeUnitLimit, message),
    (message) => appendTransactionMessageInstructions(instructions, message),
    (message) => signTransactionMessageWithSigners(message),
  );
  return {
    base64: getBase64EncodedWireTransaction(transaction),
    signature: getSignatureFromTransaction(transaction),
    validUntil: lifetime.lastValidBlockHeight,
  };
}
