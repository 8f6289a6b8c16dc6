// What `getRecentPrioritizationFees` answers, as a validator's prioritization fee cache does: for
// each of the last 150 blocks, the lowest compute-unit price a transaction of the block paid, or,
// when higher, the lowest price paid by the block's transactions that write-locked one of the
// accounts asked about. Each transaction of a block is counted once, the first time the block's
// prices are asked for after it landed.
import { encodeBase58 } from './base58.ts';
import { computeBudgetOf } from './fees.ts';
import type { History, TxRecord } from './history.ts';
import { decodeWireTransaction, isStaticKeyWritable } from './wire.ts';

/** Blocks the cache remembers (MAX_NUM_RECENT_BLOCKS). */
export const RECENT_FEE_SLOTS = 150;

/** A block's least price (null while it has no transaction), the least paid writing each account, and how many of its transactions count. */
interface BlockFees {
  least: bigint | null;
  byAccount: Map<string, bigint>;
  counted: number;
}

/** Counts one more transaction of the block. */
function count(fees: BlockFees, record: TxRecord): void {
  const { message } = decodeWireTransaction(record.wire);
  const price = computeBudgetOf(message).unitPrice;
  if (fees.least === null || price < fees.least) fees.least = price;
  const writable = [
    ...message.staticAccounts.filter((_, index) => isStaticKeyWritable(message, index)),
    ...record.loadedWritable.map(encodeBase58),
  ];
  for (const account of writable) {
    const known = fees.byAccount.get(account);
    if (known === undefined || price < known) fees.byAccount.set(account, price);
  }
  fees.counted++;
}

/** A block's entry for some accounts: its least price, raised to the least paid writing any of them. */
function feeFor(fees: BlockFees, addresses: readonly string[]): bigint {
  let fee = fees.least ?? 0n;
  for (const address of addresses) {
    const paid = fees.byAccount.get(address);
    if (paid !== undefined && paid > fee) fee = paid;
  }
  return fee;
}

/**
 * The recent prices of one chain's blocks, read from its history. `goingRate` is the least price a
 * congested block's other transactions paid (the mainnet profile's fee market; 0 while calm).
 */
export function createPriorityFees(
  history: Pick<History, 'inSlot'>,
  goingRate: (slot: number) => bigint = () => 0n,
) {
  const blocks = new Map<number, BlockFees>();
  return {
    /** Forgets a block rolled back. */
    forget(slot: number) {
      blocks.delete(slot);
    },
    /** The entries of the last 150 slots up to `currentSlot`, oldest first (a block without transactions: 0). */
    recent(currentSlot: number, addresses: readonly string[]): { slot: number; prioritizationFee: bigint }[] {
      const first = Math.max(0, currentSlot - RECENT_FEE_SLOTS + 1);
      for (const slot of blocks.keys()) if (slot < first) blocks.delete(slot);
      return Array.from({ length: currentSlot - first + 1 }, (_, index) => {
        const slot = first + index;
        let fees = blocks.get(slot);
        if (!fees) {
          fees = { least: null, byAccount: new Map(), counted: 0 };
          blocks.set(slot, fees);
        }
        // Only the current slot's block still grows: what landed since the last question counts.
        const transactions = history.inSlot(slot);
        for (let i = fees.counted; i < transactions.length; i++) count(fees, transactions[i] as TxRecord);
        let fee = feeFor(fees, addresses);
        const rate = goingRate(slot);
        if (rate > fee) fee = rate;
        return { slot, prioritizationFee: fee };
      });
    },
  };
}
