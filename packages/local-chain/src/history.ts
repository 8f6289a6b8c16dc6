// What the chain remembers about landed transactions, and the indexes history questions are
// answered from: by signature (statuses, getTransaction), by slot (blocks) and by account address
// (getSignaturesForAddress). Only the newest records are kept; blocks older than the oldest
// forgotten one are reported as cleaned up, as a validator reports ledger it no longer has.
import { encodeBase58 } from './base58.ts';
import type { DescribedError } from './tx-error.ts';
import { decodeWireTransaction, type WireMessage } from './wire.ts';

/** Slots the status cache remembers signatures for (MAX_CACHE_ENTRIES). */
export const STATUS_CACHE_SLOTS = 300;

/** A token balance entry of a recorded transaction (pre or post). */
export interface TokenBalanceRecord {
  accountIndex: number;
  mint: Uint8Array;
  owner: Uint8Array;
  programId: Uint8Array;
  amount: bigint;
  decimals: number;
}

/** One inner (CPI) instruction, compiled against the transaction's account keys. */
export interface InnerInstructionRecord {
  programIdIndex: number;
  accounts: Uint8Array;
  data: Uint8Array;
  stackHeight: number;
}

/** Everything the chain remembers about a landed transaction. */
export interface TxRecord {
  seq: number;
  signature: string;
  slot: number;
  blockTime: number;
  wire: Uint8Array;
  err: DescribedError | null;
  logs: string[];
  fee: bigint;
  unitsConsumed: bigint;
  loadedWritable: Uint8Array[];
  loadedReadonly: Uint8Array[];
  preBalances: bigint[];
  postBalances: bigint[];
  preTokenBalances: TokenBalanceRecord[];
  postTokenBalances: TokenBalanceRecord[];
  innerInstructions: { index: number; instructions: InnerInstructionRecord[] }[];
  returnData: { programId: Uint8Array; data: Uint8Array } | null;
}

/** Where getSignaturesForAddress starts and stops, newest first. */
export interface AddressQuery {
  limit: number;
  /** Start below this signature (exclusive); an unknown one finds nothing, as on a validator. */
  before?: string;
  /** Stop at this signature (exclusive); an unknown one does not bound the search. */
  until?: string;
  /** Only transactions of this slot and older (those that reached the read's commitment). */
  maxSlot?: number;
}

/** The records of one chain. */
export type History = ReturnType<typeof createHistory>;

/** Creates the history, with restored records (oldest first) when resuming. */
export function createHistory(options: {
  maxRecords: number;
  records?: TxRecord[];
  firstAvailableSlot?: number;
}) {
  const { maxRecords } = options;
  const bySignature = new Map<string, TxRecord>();
  const bySlot = new Map<number, TxRecord[]>();
  const byAddress = new Map<string, TxRecord[]>();
  // The addresses each record is listed under, kept so that forgetting it needs no decoding.
  const addressesOf = new Map<TxRecord, string[]>();
  let firstAvailableSlot = options.firstAvailableSlot ?? 0;

  function push<K>(index: Map<K, TxRecord[]>, key: K, record: TxRecord) {
    const list = index.get(key);
    if (list) list.push(record);
    else index.set(key, [record]);
  }

  // Records are forgotten oldest first, so each is the first of every list it is in.
  function shift<K>(index: Map<K, TxRecord[]>, key: K) {
    const list = index.get(key);
    list?.shift();
    if (list?.length === 0) index.delete(key);
  }

  // Every account of a transaction counts: static ones, then those loaded from lookup tables.
  function index(record: TxRecord, message: WireMessage) {
    const addresses = [
      ...message.staticAccounts,
      ...record.loadedWritable.map(encodeBase58),
      ...record.loadedReadonly.map(encodeBase58),
    ];
    bySignature.set(record.signature, record);
    push(bySlot, record.slot, record);
    for (const address of addresses) push(byAddress, address, record);
    addressesOf.set(record, addresses);
  }

  function forget(record: TxRecord) {
    bySignature.delete(record.signature);
    shift(bySlot, record.slot);
    for (const address of addressesOf.get(record) ?? []) shift(byAddress, address);
    addressesOf.delete(record);
    firstAvailableSlot = Math.max(firstAvailableSlot, record.slot + 1);
  }

  for (const record of options.records ?? []) index(record, decodeWireTransaction(record.wire).message);

  return {
    /** Remembers a landed transaction; forgets the oldest beyond the cap, but never one the status cache still needs. */
    add(record: TxRecord, message: WireMessage, currentSlot: number) {
      index(record, message);
      while (bySignature.size > maxRecords) {
        const oldest = bySignature.values().next().value;
        if (!oldest || currentSlot - oldest.slot <= STATUS_CACHE_SLOTS) break;
        forget(oldest);
      }
    },
    /** Forgets the newest block's records (its block was rolled back); returns them. */
    removeSlot(slot: number): readonly TxRecord[] {
      const records = bySlot.get(slot) ?? [];
      bySlot.delete(slot);
      for (const record of records) {
        bySignature.delete(record.signature);
        for (const address of addressesOf.get(record) ?? []) {
          const list = byAddress.get(address)?.filter((listed) => listed !== record);
          if (list?.length) byAddress.set(address, list);
          else byAddress.delete(address);
        }
        addressesOf.delete(record);
      }
      return records;
    },
    get: (signature: string): TxRecord | undefined => bySignature.get(signature),
    /** The transactions of a slot's block, in execution order. */
    inSlot: (slot: number): readonly TxRecord[] => bySlot.get(slot) ?? [],
    /** The transactions that list `address` among their accounts, newest first. */
    forAddress(address: string, query: AddressQuery): TxRecord[] {
      const list = byAddress.get(address) ?? [];
      const before = query.before === undefined ? undefined : bySignature.get(query.before);
      if (query.before !== undefined && !before) return [];
      const below = before?.seq ?? Number.POSITIVE_INFINITY;
      const until = query.until === undefined ? 0 : (bySignature.get(query.until)?.seq ?? 0);
      const out: TxRecord[] = [];
      for (let i = list.length - 1; i >= 0 && out.length < query.limit; i--) {
        const record = list[i] as TxRecord;
        if (record.seq >= below || record.slot > (query.maxSlot ?? Number.POSITIVE_INFINITY)) continue;
        if (record.seq <= until) break;
        out.push(record);
      }
      return out;
    },
    /** The oldest slot whose block is still complete. */
    firstAvailableSlot: () => firstAvailableSlot,
    /** Records remembered, oldest first. */
    all: (): IterableIterator<TxRecord> => bySignature.values(),
  };
}
