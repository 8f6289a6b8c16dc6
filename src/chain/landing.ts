import { setTimeout as delay } from 'node:timers/promises';
import {
  type Address,
  appendTransactionMessageInstructions,
  type Base64EncodedWireTransaction,
  createTransactionMessage,
  decompileTransactionMessage,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getSignatureFromTransaction,
  getTransactionDecoder,
  type Instruction,
  isWritableRole,
  pipe,
  type Signature,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type TransactionError,
  type TransactionSigner,
} from '@solana/kit';
import {
  COMPUTE_BUDGET_PROGRAM_ADDRESS,
  ComputeBudgetInstruction,
  getSetComputeUnitLimitInstructionDataDecoder,
  getSetComputeUnitPriceInstructionDataDecoder,
  identifyComputeBudgetInstruction,
  setTransactionMessageComputeUnitPrice,
  updateOrAppendSetComputeUnitLimitInstruction,
} from '@solana-program/compute-budget';
import { LAMPORTS_PER_SIGNATURE, priorityFeeLamports } from '../domain/route.ts';
import { isChainError } from './errors.ts';
import { simulate, withMargin } from './transactions.ts';
import type {
  BlockHeightReader,
  BlockhashLifetime,
  CallOptions,
  SignatureStatus,
  SignatureStatusReader,
  TransactionReader,
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
 * failed, e.g. a step is not due yet on the node's clock), the limit is `fallbackUnits`. The price
 * may depend on the limit (a budget in lamports divided by it).
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
  const computeUnitLimit =
    simulated.unitsConsumed === null ? input.fallbackUnits : withMargin(simulated.unitsConsumed);
  const microLamportsPerCu =
    typeof input.microLamportsPerCu === 'bigint'
      ? input.microLamportsPerCu
      : input.microLamportsPerCu(computeUnitLimit);
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

/** The most accounts `getRecentPrioritizationFees` is asked about at once. */
const MAX_FEE_ACCOUNTS = 128;

/** The accounts a transaction of `instructions` paid by `payer` write-locks: those whose recent fees price it. */
export function writtenAccounts(payer: Address, instructions: readonly Instruction[]): Address[] {
  const written = new Set<Address>([payer]);
  for (const instruction of instructions)
    for (const account of instruction.accounts ?? [])
      if ('address' in account && isWritableRole(account.role)) written.add(account.address);
  return [...written].slice(0, MAX_FEE_ACCOUNTS);
}

/** What a signed transaction asks for: its signatures, compute-unit limit and price (micro-lamports). */
export function computeBudgetOf(transaction: Pick<SignedTransaction, 'base64'>): {
  signatures: number;
  computeUnitLimit: number;
  microLamportsPerCu: bigint;
} {
  const decoded = getTransactionDecoder().decode(getBase64Encoder().encode(transaction.base64));
  const message = decompileTransactionMessage(
    getCompiledTransactionMessageDecoder().decode(decoded.messageBytes),
  );
  const budget = {
    signatures: Object.keys(decoded.signatures).length,
    computeUnitLimit: 0,
    microLamportsPerCu: 0n,
  };
  for (const { programAddress, data } of message.instructions) {
    if (programAddress !== COMPUTE_BUDGET_PROGRAM_ADDRESS || !data) continue;
    const kind = identifyComputeBudgetInstruction(data);
    if (kind === ComputeBudgetInstruction.SetComputeUnitLimit)
      budget.computeUnitLimit = getSetComputeUnitLimitInstructionDataDecoder().decode(data).units;
    if (kind === ComputeBudgetInstruction.SetComputeUnitPrice)
      budget.microLamportsPerCu = getSetComputeUnitPriceInstructionDataDecoder().decode(data).microLamports;
  }
  return budget;
}

/**
 * What the runtime charges a transaction of the service once it landed: its signatures and its
 * priority fee (the service's transactions verify no signatures through precompiles).
 */
export function chargedFee(transaction: Pick<SignedTransaction, 'base64'>): bigint {
  const budget = computeBudgetOf(transaction);
  return (
    LAMPORTS_PER_SIGNATURE * BigInt(budget.signatures) +
    priorityFeeLamports(budget.computeUnitLimit, budget.microLamportsPerCu)
  );
}

/**
 * What a transaction of the service that may or may not have landed paid in fees: as the node
 * records it, or, when it keeps the status but not the transaction, what the runtime charges; 0
 * when it never landed (a refusal in preflight costs nothing).
 */
export async function feePaid(
  chain: TransactionReader & SignatureStatusReader,
  transaction: Pick<SignedTransaction, 'base64' | 'signature'>,
  options: CallOptions = {},
): Promise<bigint> {
  const signature = transaction.signature as Signature;
  const landed = await chain.getTransaction(signature, options);
  if (landed) return landed.fee;
  const [status] = await chain.getSignatureStatuses([signature], {
    ...options,
    searchTransactionHistory: true,
  });
  return status ? chargedFee(transaction) : 0n;
}
