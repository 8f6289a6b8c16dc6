// What `getRecentPrioritizationFees` answers, as a validator's prioritization fee cache does: for
// each of the last 150 blocks, the lowest compute-unit price a transaction of the block paid, or,
// when higher, the lowest price paid by the block's transactions that write-locked one of the
// accounts asked about. Worked out from the blocks the history keeps, when asked.
import { encodeBase58 } from './base58.ts';
import { computeBudgetOf } from './fees.ts';
import type { History, TxRecord } from './history.ts';
import { decodeWireTransaction, isStaticKeyWritable } from './wire.ts';

/** Blocks the cache remembers (MAX_NUM_RECENT_BLOCKS). */
export const RECENT_FEE_SLOTS = 150;

/** The price a transaction paid per compute unit (micro-lamports), and the accounts it write-locked. */
function feeOf(record: TxRecord): { price: bigint; writable: string[] } {
  const { message } = decodeWireTransaction(record.wire);
  const writable = message.staticAccounts.filter((_, index) => isStaticKeyWritable(message, index));
  return {
    price: computeBudgetOf(message).unitPrice,
    writable: [...writable, ...record.loadedWritable.map(encodeBase58)],
  };
}

/** A block's entry: the least price of all its transactions, raised by those of the accounts asked about. */
function blockFee(transactions: readonly TxRecord[], accounts: ReadonlySet<string>): bigint {
  let least: bigint | null = null;
  const leastOf = new Map<string, bigint>();
  for (const record of transactions) {
    const { price, writable } = feeOf(record);
    if (least === null || price < least) least = price;
    for (const account of writable) {
      if (!accounts.has(account)) continue;
      const known = leastOf.get(account);
      if (known === undefined || price < known) leastOf.set(account, price);
    }
  }
  let fee = least ?? 0n;
  for (const price of leastOf.values()) if (price > fee) fee = price;
  return fee;
}

/** The entries of the last 150 slots up to `currentSlot`, oldest first (a block without transactions pays 0). */
export function recentPrioritizationFees(
  history: Pick<History, 'inSlot'>,
  currentSlot: number,
  addresses: readonly string[],
): { slot: number; prioritizationFee: bigint }[] {
  const accounts = new Set(addresses);
  const first = Math.max(0, currentSlot - RECENT_FEE_SLOTS + 1);
  return Array.from({ length: currentSlot - first + 1 }, (_, index) => {
    const slot = first + index;
    return { slot, prioritizationFee: blockFee(history.inSlot(slot), accounts) };
  });
}
