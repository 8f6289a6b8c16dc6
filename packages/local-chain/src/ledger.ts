// The local chain: a LiteSVM runtime made to behave like a validator. This module puts its parts
// together and gives them one face: slots.ts (slots, blockhashes, the Clock and SlotHashes
// sysvars), transactions.ts (checking, executing and recording transactions), history.ts (what is
// remembered, by signature, slot and address), priority-fees.ts (recent prices, from the blocks)
// and cheats.ts (faucet, account writes, time travel).
// Every call first produces the slots that are due, so the chain is as current as its clock.
// Everything is synchronous and single-threaded: one request is one atomic step of the chain.
//
// It drives LiteSVM's native binding (`litesvm/dist/internal.js`) rather than the kit-typed
// wrapper: the endpoint receives raw wire bytes and the binding takes them as they are.
import { randomBytes } from 'node:crypto';
import { EpochSchedule, LiteSvm } from 'litesvm/dist/internal.js';
import { encodeBase58 } from './base58.ts';
import {
  type AccountPatch,
  createCheats,
  type ProgramDeployment,
  type TimeTravelTarget,
  type TokenAccountPatch,
} from './cheats.ts';
import type { Clock } from './clock.ts';
import { computeFee } from './fees.ts';
import { type AddressQuery, createHistory, STATUS_CACHE_SLOTS, type TxRecord } from './history.ts';
import { createPriorityFees } from './priority-fees.ts';
import { createSlots, DEFAULT_SLOT_MS, SLOTS_PER_EPOCH } from './slots.ts';
import { createTransactions, type LedgerAccount, ledgerAccount } from './transactions.ts';
import type { WireMessage } from './wire.ts';

/** Numbers of getEpochInfo. */
export interface EpochInfo {
  absoluteSlot: number;
  blockHeight: number;
  epoch: number;
  slotIndex: number;
  slotsInEpoch: number;
  transactionCount: number;
}

/** A block: one slot and the transactions that landed in it. */
export interface Block {
  slot: number;
  parentSlot: number;
  blockhash: string;
  previousBlockhash: string;
  blockTime: number;
  transactions: readonly TxRecord[];
}

/** The metadata saved beside LiteSVM's own snapshot. */
export interface LedgerMeta {
  version: 1;
  genesisHash: string;
  faucetSeed: string;
  slot: number;
  chainTimeMs: number;
  seq: number;
  airdropCount: number;
  /** Absent in snapshots of versions that served no blocks (see slots.ts). */
  anchors?: [number, number][];
  firstAvailableSlot?: number;
}

/** State to resume from (see persistence.ts). */
export interface RestoredLedger {
  svmBytes: Uint8Array;
  meta: LedgerMeta;
  records: TxRecord[];
}

/** Configuration of a ledger. */
export interface LedgerOptions {
  clock: Clock;
  slotMs?: number;
  programs?: readonly ProgramDeployment[];
  restored?: RestoredLedger;
  /** Oldest transactions are forgotten beyond this many (default 50,000). */
  maxRecordedTransactions?: number;
}

type TransactionListener = (record: TxRecord, keys: Uint8Array[], writable: Uint8Array[]) => void;

/** The local chain state machine. */
export type Ledger = ReturnType<typeof createLedger>;

/** Creates a ledger, fresh or resumed from saved state. */
export function createLedger(options: LedgerOptions) {
  const meta = options.restored?.meta;
  const svm = options.restored ? LiteSvm.fromBytes(options.restored.svmBytes) : new LiteSvm();
  // Blockhash age and duplicate signatures are checked by the ledger, against a per-slot window
  // and a status cache, instead of LiteSVM's single "latest blockhash".
  svm.setBlockhashCheck(false);
  svm.setTransactionHistory(0n);
  svm.setSigverify(true);
  if (!meta) {
    svm.setEpochSchedule(new EpochSchedule(BigInt(SLOTS_PER_EPOCH), BigInt(SLOTS_PER_EPOCH), false, 0n, 0n));
    svm.withNativeMints();
  }
  const genesisHash = meta?.genesisHash ?? encodeBase58(randomBytes(32));
  const faucetSeed = meta ? Buffer.from(meta.faucetSeed, 'hex') : randomBytes(32);
  const slots = createSlots({
    svm,
    clock: options.clock,
    slotMs: options.slotMs ?? DEFAULT_SLOT_MS,
    genesisHash,
    restored: meta && { slot: meta.slot, chainTimeMs: meta.chainTimeMs, anchors: meta.anchors ?? [] },
  });
  const history = createHistory({
    maxRecords: options.maxRecordedTransactions ?? 50_000,
    records: options.restored?.records,
    firstAvailableSlot: meta?.firstAvailableSlot,
  });
  const priorityFees = createPriorityFees(history);
  const listeners = new Set<TransactionListener>();
  // Write-behind saving: what changed since the last exportState.
  let dirty = !meta;
  let unsaved: TxRecord[] = [];
  const transactions = createTransactions({
    svm,
    slots,
    history,
    seq: meta?.seq ?? 0,
    onLanded(record, keys, writable) {
      unsaved.push(record);
      for (const listener of listeners) listener(record, keys, writable);
    },
  });
  const cheats = createCheats({
    svm,
    slots,
    faucetSeed,
    airdropCount: meta?.airdropCount ?? 0,
    submit: transactions.submit,
  });
  slots.onSlot(() => {
    dirty = true;
  });
  for (const program of options.programs ?? []) {
    cheats.deployProgram(program);
    dirty = true;
  }

  function epochInfo(): EpochInfo {
    slots.sync();
    const slot = slots.current();
    return {
      absoluteSlot: slot,
      blockHeight: slot,
      epoch: Math.floor(slot / SLOTS_PER_EPOCH),
      slotIndex: slot % SLOTS_PER_EPOCH,
      slotsInEpoch: SLOTS_PER_EPOCH,
      transactionCount: transactions.count(),
    };
  }

  return {
    genesisHash,
    faucetAddress: cheats.faucetAddress,
    slotMs: options.slotMs ?? DEFAULT_SLOT_MS,
    /** Produces the slots that wall time says are due. */
    sync: slots.sync,
    epochInfo,
    /** The current slot (which is also the block height: this chain skips no slot). */
    slot(): number {
      slots.sync();
      return slots.current();
    },
    /** The chain's current time in Unix milliseconds (wall time plus any time travel). */
    chainTimeMs: slots.chainNowMs,
    /** Unix seconds of the current slot, as the Clock sysvar holds it. */
    unixTimestamp(): number {
      slots.sync();
      return slots.unixSecondsAt(slots.current());
    },
    latestBlockhash(): { blockhash: string; lastValidBlockHeight: number } {
      slots.sync();
      return slots.latest();
    },
    isBlockhashValid(blockhash: string): boolean {
      slots.sync();
      return slots.blockhashSlot(blockhash) !== undefined;
    },
    /** The fee of a message, or null when its blockhash is not usable. */
    feeForMessage(message: WireMessage): bigint | null {
      slots.sync();
      if (slots.blockhashSlot(message.lifetimeToken) === undefined) return null;
      return computeFee(message);
    },

    /** Checks, executes and records a serialized transaction. Throws WireFormatError on bad bytes. */
    submit(bytes: Uint8Array, opts: { preflight: boolean }) {
      slots.sync();
      return transactions.submit(bytes, opts);
    },
    /** Runs a transaction without committing it. Throws WireFormatError on bad bytes. */
    simulate(bytes: Uint8Array, opts: Parameters<typeof transactions.simulate>[1]) {
      slots.sync();
      return transactions.simulate(bytes, opts);
    },

    getAccount(key: Uint8Array): LedgerAccount | null {
      slots.sync();
      return ledgerAccount(svm.getAccount(key));
    },
    getBalance(key: Uint8Array): bigint {
      slots.sync();
      return svm.getBalance(key) ?? 0n;
    },
    programAccounts(program: Uint8Array): { key: Uint8Array; account: LedgerAccount }[] {
      slots.sync();
      return svm.getProgramAccounts(program).flatMap((entry) => {
        const account = ledgerAccount(entry.account());
        return account ? [{ key: entry.address, account }] : [];
      });
    },
    minimumBalanceForRentExemption(size: number): bigint {
      return svm.minimumBalanceForRentExemption(BigInt(size));
    },

    /** The record of a landed transaction, if the chain still remembers it. */
    getTransaction(signature: string): TxRecord | undefined {
      slots.sync();
      return history.get(signature);
    },
    /** The status of a signature, as getSignatureStatuses reports it. */
    signatureStatus(signature: string, searchTransactionHistory: boolean): TxRecord | null {
      slots.sync();
      const record = history.get(signature);
      if (!record) return null;
      return searchTransactionHistory || slots.current() - record.slot <= STATUS_CACHE_SLOTS ? record : null;
    },
    /** Transactions that list `address` among their accounts, newest first. */
    signaturesForAddress(address: string, query: AddressQuery): TxRecord[] {
      slots.sync();
      return history.forAddress(address, query);
    },
    /** Per recent slot, the least compute-unit price paid, as high as that of any of `addresses` (see priority-fees.ts). */
    recentPrioritizationFees(addresses: readonly string[]) {
      slots.sync();
      return priorityFees.recent(slots.current(), addresses);
    },
    /** The oldest slot whose block is still complete. */
    firstAvailableBlock: history.firstAvailableSlot,
    /** The block of a slot from the first available one to the current one. */
    block(slot: number): Block {
      return {
        slot,
        parentSlot: Math.max(0, slot - 1),
        blockhash: slots.blockhashAt(slot),
        // Slot 0 has no parent: validators give the default (all-zero) hash.
        previousBlockhash: slot === 0 ? encodeBase58(new Uint8Array(32)) : slots.blockhashAt(slot - 1),
        blockTime: slots.unixSecondsAt(slot),
        transactions: history.inSlot(slot),
      };
    },

    /** Sends lamports from the faucet. */
    airdrop(to: Uint8Array, lamports: bigint) {
      slots.sync();
      return cheats.airdrop(to, lamports);
    },
    /** Creates or overwrites an account (cheat code). */
    setAccount(key: Uint8Array, patch: AccountPatch) {
      slots.sync();
      cheats.setAccount(key, patch);
      dirty = true;
    },
    /** Creates or updates `owner`'s associated token account for an existing `mint` (cheat code). */
    async setTokenAccount(
      owner: Uint8Array,
      mint: Uint8Array,
      patch: TokenAccountPatch,
      tokenProgram: Uint8Array,
    ) {
      slots.sync();
      const ata = await cheats.setTokenAccount(owner, mint, patch, tokenProgram);
      dirty = true;
      return ata;
    },
    /** Moves slot and clock forward (never back) to the target; returns the new epoch info. */
    timeTravel(target: TimeTravelTarget): EpochInfo {
      slots.sync();
      cheats.timeTravel(target);
      return epochInfo();
    },

    /** Calls `listener` with each new slot; returns the unsubscribe function. */
    onSlot: slots.onSlot,
    /** Calls `listener` with each landed transaction, all its account keys and those it could write. */
    onTransaction(listener: TransactionListener): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    /** Whether anything changed since the last `exportState`. */
    isDirty: () => dirty || unsaved.length > 0,
    /** Captures a consistent snapshot plus the records landed since the previous capture. */
    exportState(): { svmBytes: Uint8Array; meta: LedgerMeta; newRecords: TxRecord[] } {
      const { slot, chainTimeMs, anchors } = slots.state();
      const newRecords = unsaved;
      unsaved = [];
      dirty = false;
      return {
        svmBytes: svm.toBytes(),
        meta: {
          version: 1,
          genesisHash,
          faucetSeed: faucetSeed.toString('hex'),
          slot,
          chainTimeMs,
          seq: transactions.count(),
          airdropCount: cheats.airdropCount(),
          anchors,
          firstAvailableSlot: history.firstAvailableSlot(),
        },
        newRecords,
      };
    },
    /** Records currently remembered, oldest first. */
    allRecords: history.all,
  };
}
