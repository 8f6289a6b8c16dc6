import {
  type Address,
  decompileTransactionMessage,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type Instruction,
  isWritableRole,
  type Signature,
} from '@solana/kit';
import {
  COMPUTE_BUDGET_PROGRAM_ADDRESS,
  ComputeBudgetInstruction,
  getSetComputeUnitLimitInstructionDataDecoder,
  getSetComputeUnitPriceInstructionDataDecoder,
  identifyComputeBudgetInstruction,
} from '@solana-program/compute-budget';
import { LAMPORTS_PER_SIGNATURE, priorityFeeLamports } from '../domain/route.ts';
import type { SignedTransaction } from './landing.ts';
import type { CallOptions, SignatureStatusReader, TransactionReader } from './types.ts';

/*
 * What the service's own transactions write and cost: the accounts whose recent fees price one,
 * the compute budget its signed bytes ask for, and the fee it paid once it landed.
 */

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
