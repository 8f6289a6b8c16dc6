// The local chain: a LiteSVM runtime made to behave like a validator. This module puts its parts
// together and gives them one face: slots.ts (slots, blockhashes, the Clock and SlotHashes
// sysvars), transactions.ts (checking, executing and recording transactions), history.ts (what is
// remembered, by signature, slot and address), priority-fees.ts (recent prices, from the blocks),
// cheats.ts (faucet, account writes, time travel) and, on the mainnet profile, cluster.ts (leaders
// including sent transactions later or never, forks, congestion, and reads at each commitment).
// Every call first produces the slots that are due, so the chain is as current as its clock.
// Everything is synchronous and single-threaded: one request is one atomic step of the chain.
//
// It drives LiteSVM's native binding (`litesvm/dist/internal.js`) rather than the kit-typed
// wrapper: the endpoint receives raw wire bytes and the binding takes them as they are.
import { createHash, randomBytes } from 'node:crypto';
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
import { type Cluster, type ClusterStats, type Commitment, createCluster } from './cluster.ts';
import { computeFee } from './fees.ts';
import { type AddressQuery, createHistory, STATUS_CACHE_SLOTS, type TxRecord } from './history.ts';
import { keyOf } from './keys.ts';
import { createPriorityFees } from './priority-fees.ts';
import type { ChainProfile } from './profile.ts';
import { BLOCKHASH_VALID_SLOTS, createSlots, DEFAULT_SLOT_MS, SLOTS_PER_EPOCH } from './slots.ts';
import { createTransactions, type LedgerAccount, ledgerAccount, type SubmitOutcome } from './transactions.ts';
import { decodeWireTransaction, type WireMessage } from './wire.ts';

export type { Commitment } from './cluster.ts';

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
  /** How the chain behaves (default: instant; see profile.ts). */
  profile?: ChainProfile;
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
  const behaviour = options.profile?.cluster;
  const seed = options.profile?.seed ?? '';
  // A mainnet-like chain's identity comes from its seed too, so that its blockhashes, and the
  // signatures of what is built on them, repeat from run to run.
  const seeded = (what: string) => createHash('sha256').update(`${what}:${seed}`).digest();
  const genesisHash = meta?.genesisHash ?? encodeBase58(behaviour ? seeded('genesis') : randomBytes(32));
  const faucetSeed = meta
    ? Buffer.from(meta.faucetSeed, 'hex')
    : behaviour
      ? seeded('faucet')
      : randomBytes(32);
  const slots = createSlots({
    svm,
    clock: options.clock,
    slotMs: options.slotMs ?? DEFAULT_SLOT_MS,
    genesisHash,
    restored: meta && { slot: meta.slot, chainTimeMs: meta.chainTimeMs, anchors: meta.anchors ?? [] },
    stepwise: !!behaviour,
  });
  const history = createHistory({
    maxRecords: options.maxRecordedTransactions ?? 50_000,
    records: options.restored?.records,
    firstAvailableSlot: meta?.firstAvailableSlot,
  });
  const priorityFees = createPriorityFees(history, (slot) => cluster?.rateAt(slot) ?? 0n);
  const listeners = new Set<TransactionListener>();
  const travellers = new Set<(chainTimeMs: number) => void>();
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
    beforeExecute: (writable) => cluster?.overwriting(writable),
  });
  const cluster: Cluster | undefined =
    behaviour &&
    createCluster(behaviour, seed, {
      svm,
      slots,
      history,
      execute: (bytes) => transactions.submit(bytes, { preflight: false }),
      onRolledBack(slot) {
        unsaved = unsaved.filter((record) => record.slot !== slot);
        priorityFees.forget(slot);
        dirty = true;
      },
    });
  // The blocks of a mainnet-like chain are produced as their slots begin.
  if (cluster) slots.onSlot((slot) => cluster.produce(slot));
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

  /** The slot a read at `commitment` sees (the tip, unless the chain is mainnet-like). */
  function slotAt(commitment: Commitment): number {
    slots.sync();
    return cluster ? cluster.slotAt(commitment) : slots.current();
  }

  function accountAt(key: Uint8Array, commitment: Commitment): LedgerAccount | null {
    const at = slotAt(commitment);
    const current = () => ledgerAccount(svm.getAccount(key));
    return cluster ? cluster.accountAt(key, at, current) : current();
  }

  function epochInfo(commitment: Commitment = 'processed'): EpochInfo {
    const slot = slotAt(commitment);
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
    /**
     * The slot at a commitment (default: the tip). It is also the block height: a slot whose block
     * was rolled back still counts, a simplification of how clusters count skipped slots.
     */
    slot: (commitment: Commitment = 'processed'): number => slotAt(commitment),
    /** How far a landed transaction's block has come; every block is final at once on an instant chain. */
    confirmationOf(slot: number): { confirmationStatus: Commitment; confirmations: number | null } {
      slots.sync();
      return cluster ? cluster.statusOf(slot) : { confirmationStatus: 'finalized', confirmations: null };
    },
    /** Whether the chain confirms and finalizes as it produces (the instant profile). */
    instant: !cluster,
    /** Whether a slot's block was rolled back (its slot is then skipped). */
    isSkipped: (slot: number): boolean => cluster?.isSkipped(slot) ?? false,
    /** Transactions sent but not yet included by a leader. */
    pendingCount: (): number => cluster?.pendingCount() ?? 0,
    /** What block production did so far; null on an instant chain. */
    clusterStats: (): ClusterStats | null => cluster?.stats() ?? null,
    /** The chain's current time in Unix milliseconds (wall time plus any time travel). */
    chainTimeMs: slots.chainNowMs,
    /** Unix seconds of the current slot, as the Clock sysvar holds it. */
    unixTimestamp(): number {
      slots.sync();
      return slots.unixSecondsAt(slots.current());
    },
    latestBlockhash(commitment: Commitment = 'processed'): {
      blockhash: string;
      lastValidBlockHeight: number;
    } {
      const slot = slotAt(commitment);
      return { blockhash: slots.blockhashAt(slot), lastValidBlockHeight: slot + BLOCKHASH_VALID_SLOTS };
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

    /**
     * Checks, executes and records a serialized transaction; on a mainnet-like chain, checks it and
     * hands it to a leader (the outcome is `queued`). Throws WireFormatError on bad bytes.
     */
    submit(bytes: Uint8Array, opts: { preflight: boolean }): SubmitOutcome {
      slots.sync();
      if (!cluster) return transactions.submit(bytes, opts);
      const refused = transactions.admit(bytes, opts);
      if (refused) return refused;
      const signature = encodeBase58(decodeWireTransaction(bytes).signatures[0] as Uint8Array);
      cluster.accept(bytes, signature);
      return { kind: 'queued', signature };
    },
    /** Runs a transaction without committing it. Throws WireFormatError on bad bytes. */
    simulate(bytes: Uint8Array, opts: Parameters<typeof transactions.simulate>[1]) {
      slots.sync();
      return transactions.simulate(bytes, opts);
    },

    /** An account as a read at `commitment` sees it (default: the tip). */
    getAccount: (key: Uint8Array, commitment: Commitment = 'processed'): LedgerAccount | null =>
      accountAt(key, commitment),
    getBalance: (key: Uint8Array, commitment: Commitment = 'processed'): bigint =>
      accountAt(key, commitment)?.lamports ?? 0n,
    programAccounts(
      program: Uint8Array,
      commitment: Commitment = 'processed',
    ): { key: Uint8Array; account: LedgerAccount }[] {
      const at = slotAt(commitment);
      const accounts = new Map<string, { key: Uint8Array; account: LedgerAccount }>();
      for (const entry of svm.getProgramAccounts(program)) {
        const account = ledgerAccount(entry.account());
        if (account) accounts.set(keyOf(entry.address), { key: entry.address, account });
      }
      // Accounts written since the slot read had another state then, perhaps another owner.
      const owner = keyOf(program);
      for (const { key, before } of cluster?.writtenAfter(at) ?? []) {
        accounts.delete(keyOf(key));
        if (before && keyOf(before.owner) === owner) accounts.set(keyOf(key), { key, account: before });
      }
      return [...accounts.values()];
    },
    minimumBalanceForRentExemption(size: number): bigint {
      return svm.minimumBalanceForRentExemption(BigInt(size));
    },

    /** The record of a landed transaction, if the chain still remembers it and it has reached `commitment`. */
    getTransaction(signature: string, commitment: Commitment = 'confirmed'): TxRecord | undefined {
      const at = slotAt(commitment);
      const record = history.get(signature);
      return record && record.slot <= at ? record : undefined;
    },
    /** The status of a signature, as getSignatureStatuses reports it. */
    signatureStatus(signature: string, searchTransactionHistory: boolean): TxRecord | null {
      slots.sync();
      const record = history.get(signature);
      if (!record) return null;
      return searchTransactionHistory || slots.current() - record.slot <= STATUS_CACHE_SLOTS ? record : null;
    },
    /** Transactions that list `address` among their accounts, newest first, that have reached `commitment`. */
    signaturesForAddress(
      address: string,
      query: AddressQuery,
      commitment: Commitment = 'confirmed',
    ): TxRecord[] {
      return history.forAddress(address, { ...query, maxSlot: slotAt(commitment) });
    },
    /** Per recent slot, the least compute-unit price paid, as high as that of any of `addresses` (see priority-fees.ts). */
    recentPrioritizationFees(addresses: readonly string[]) {
      slots.sync();
      return priorityFees.recent(slots.current(), addresses);
    },
    /** The oldest slot whose block is still complete. */
    firstAvailableBlock: history.firstAvailableSlot,
    /** The block of a slot from the first available one to the current one (not a skipped one). */
    block(slot: number): Block {
      let parentSlot = Math.max(0, slot - 1);
      while (parentSlot > 0 && cluster?.isSkipped(parentSlot)) parentSlot--;
      return {
        slot,
        parentSlot,
        blockhash: slots.blockhashAt(slot),
        // Slot 0 has no parent: validators give the default (all-zero) hash.
        previousBlockhash: slot === 0 ? encodeBase58(new Uint8Array(32)) : slots.blockhashAt(parentSlot),
        blockTime: slots.unixSecondsAt(slot),
        transactions: history.inSlot(slot),
      };
    },

    /** Sends lamports from the faucet. */
    airdrop(to: Uint8Array, lamports: bigint) {
      slots.sync();
      const outcome = cheats.airdrop(to, lamports);
      // The faucet is the chain's own: its block is never on a fork.
      cluster?.pin();
      return outcome;
    },
    /** Creates or overwrites an account (cheat code), as of every commitment. */
    setAccount(key: Uint8Array, patch: AccountPatch) {
      slots.sync();
      cheats.setAccount(key, patch);
      cluster?.forget(key);
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
      cluster?.forget(ata);
      dirty = true;
      return ata;
    },
    /** Moves slot and clock forward (never back) to the target; returns the new epoch info. */
    timeTravel(target: TimeTravelTarget): EpochInfo {
      slots.sync();
      cheats.timeTravel(target);
      const info = epochInfo();
      for (const listener of travellers) listener(slots.chainNowMs());
      return info;
    },
    /**
     * Calls `listener` with the chain's new time (Unix ms) after each time travel, by the cheat
     * method or in process; returns the unsubscribe function.
     */
    onTimeTravel(listener: (chainTimeMs: number) => void): () => void {
      travellers.add(listener);
      return () => travellers.delete(listener);
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
