// Block production as on a cluster, for the `mainnet` profile (profile.ts). A sent transaction
// waits for a leader: it is included in the next slot, a few slots later, or never; a block may sit
// on a minority fork and be rolled back when the next slot is produced; under congestion only
// transactions paying the going rate are included. Commitment follows the tip: a block is
// `confirmed` a slot or two after it is produced (once no fork can roll it back) and `finalized`
// `finalizationSlots` later. Reads at a commitment see the state as of that slot: every block
// keeps the state its transactions overwrote (an undo log), which also rolls a forked block back.
//
// Every draw is keyed by the seed and what it decides (a signature and its send count, a slot), so
// the same seed and the same transactions give the same run, whatever the timing of requests.
import { createHash } from 'node:crypto';
import { Account, type LiteSvm } from 'litesvm/dist/internal.js';
import { computeBudgetOf } from './fees.ts';
import type { History, TxRecord } from './history.ts';
import { keyOf } from './keys.ts';
import type { ClusterBehaviour } from './profile.ts';
import type { Slots } from './slots.ts';
import { type LedgerAccount, ledgerAccount } from './transactions.ts';
import { decodeWireTransaction } from './wire.ts';

export type Commitment = 'processed' | 'confirmed' | 'finalized';

/** A transaction a leader has and will include once its slot comes and it pays the going rate. */
interface Pending {
  bytes: Uint8Array;
  signature: string;
  includeAt: number;
  price: bigint;
}

/** The state an account had before a block first wrote it. */
interface Overwritten {
  key: Uint8Array;
  before: LedgerAccount | null;
}

/** What block production needs of the rest of the chain. */
export interface ClusterParts {
  svm: LiteSvm;
  slots: Slots;
  history: History;
  /** Executes and records a transaction in the current slot (no preflight). */
  execute(bytes: Uint8Array): void;
  /** Called with the records of a block rolled back, after they left the history. */
  onRolledBack(slot: number, records: readonly TxRecord[]): void;
}

/** A draw in [0, 1) fixed by the seed and what it decides. */
function draw(seed: string, what: string): number {
  return createHash('sha256').update(`${seed}:${what}`).digest().readUIntBE(0, 6) / 2 ** 48;
}

/** What block production did so far, by what befell transactions and blocks. */
export interface ClusterStats {
  /** Sends a leader took (a send of bytes it already held is not counted). */
  taken: number;
  /** Sends no leader received. */
  dropped: number;
  /** Sends included only several slots later. */
  delayed: number;
  /** Blocks rolled back, and the transactions they held. */
  forks: number;
  rolledBack: number;
  /** Slots with a going rate, and transactions shed for paying below it. */
  congestedSlots: number;
  shed: number;
}

/** Block production and commitment of a mainnet-like chain. */
export type Cluster = ReturnType<typeof createCluster>;

export function createCluster(behaviour: ClusterBehaviour, seed: string, parts: ClusterParts) {
  const { svm, slots, history } = parts;
  const pending = new Map<string, Pending>();
  const sends = new Map<string, number>();
  /** Per recent block, oldest first, what its transactions overwrote. */
  const undo = new Map<number, Map<string, Overwritten>>();
  const skipped = new Set<number>();
  /** Blocks that hold a faucet transaction: never on a fork. */
  const pinned = new Set<number>();
  /** Going rate of recent congested slots (µlamports per CU). */
  const rates = new Map<number, bigint>();
  const stats: ClusterStats = {
    taken: 0,
    dropped: 0,
    delayed: 0,
    forks: 0,
    rolledBack: 0,
    congestedSlots: 0,
    shed: 0,
  };
  let forkedTip: number | null = null;
  let congestedUntil = -1;
  let rate = 0n;
  let tip = slots.current();

  /** Whether a block's confirmation waits one slot or two. */
  const confirmationSlots = (slot: number) => (draw(seed, `confirm:${slot}`) < 0.5 ? 1 : 2);

  function confirmedSlot(): number {
    for (let slot = tip - 1; slot >= 0 && slot >= tip - 64; slot--) {
      if (!skipped.has(slot) && slot + confirmationSlots(slot) <= tip) return slot;
    }
    return Math.max(0, tip - 64);
  }

  function finalizedSlot(): number {
    let slot = Math.max(0, tip - behaviour.finalizationSlots);
    while (slot > 0 && skipped.has(slot)) slot--;
    return slot;
  }

  function rollBack(slot: number) {
    for (const { key, before } of undo.get(slot)?.values() ?? []) {
      svm.setAccount(
        key,
        before
          ? new Account(before.lamports, before.data, before.owner, before.executable, before.rentEpoch)
          : new Account(0n, new Uint8Array(0), new Uint8Array(32), false, 0n),
      );
    }
    undo.delete(slot);
    skipped.add(slot);
    slots.skip(slot);
    const records = history.removeSlot(slot);
    stats.forks++;
    stats.rolledBack += records.length;
    for (const record of records) {
      if (draw(seed, `requeue:${record.signature}:${slot}`) >= behaviour.forkRequeueShare) continue;
      const delay = 1 + Math.floor(draw(seed, `requeue-delay:${record.signature}:${slot}`) * 3);
      pending.set(record.signature, {
        bytes: record.wire,
        signature: record.signature,
        includeAt: tip + delay,
        price: computeBudgetOf(decodeWireTransaction(record.wire).message).unitPrice,
      });
    }
    parts.onRolledBack(slot, records);
  }

  /** Congestion comes and goes by the seed's draws, one per slot. */
  function weather(slot: number) {
    const { congestion } = behaviour;
    if (slot <= congestedUntil) return;
    rate = 0n;
    if (draw(seed, `congestion:${slot}`) >= 1 / congestion.calmMeanSlots) return;
    const lasting = Math.ceil(-congestion.congestedMeanSlots * Math.log(1 - draw(seed, `lasting:${slot}`)));
    congestedUntil = slot + lasting;
    const span = Number(congestion.maxRate - congestion.minRate);
    rate = congestion.minRate + BigInt(Math.floor(draw(seed, `rate:${slot}`) * span));
  }

  /** Produces the block of a new slot: settles the last one's fork, then includes what is due. */
  function produce(slot: number) {
    if (forkedTip !== null && forkedTip < slot) rollBack(forkedTip);
    forkedTip = null;
    tip = slot;
    weather(slot);
    if (rate > 0n) {
      rates.set(slot, rate);
      stats.congestedSlots++;
    }
    const due = [...pending.values()]
      .filter((tx) => tx.includeAt <= slot)
      .sort((a, b) => (a.price === b.price ? a.includeAt - b.includeAt : a.price > b.price ? -1 : 1));
    for (const tx of due) {
      if (tx.price < rate) {
        // Priced below the going rate: it waits, unless the leader's queue sheds it.
        if (draw(seed, `shed:${tx.signature}:${slot}`) < behaviour.congestion.dropShare) {
          pending.delete(tx.signature);
          stats.shed++;
        }
        continue;
      }
      pending.delete(tx.signature);
      parts.execute(tx.bytes);
    }
    if (history.inSlot(slot).length > 0 && draw(seed, `fork:${slot}`) < behaviour.forkShare) forkedTip = slot;
    const keepFrom = Math.min(finalizedSlot(), confirmedSlot()) - 1;
    for (const old of undo.keys()) {
      if (old >= keepFrom) break;
      undo.delete(old);
    }
    for (const old of rates.keys()) if (old < slot - 150) rates.delete(old);
    for (const old of skipped) if (old < slot - 600) skipped.delete(old);
    for (const old of pinned) if (old < slot - 2) pinned.delete(old);
  }

  return {
    /** A leader's answer to a send: kept for a later slot, or lost (the sender must send again). */
    accept(bytes: Uint8Array, signature: string) {
      const count = (sends.get(signature) ?? 0) + 1;
      sends.set(signature, count);
      if (sends.size > 100_000) sends.delete(sends.keys().next().value as string);
      if (pending.has(signature)) return;
      if (draw(seed, `drop:${signature}:${count}`) < behaviour.dropShare) {
        stats.dropped++;
        return;
      }
      stats.taken++;
      const delayed = draw(seed, `delay:${signature}:${count}`) < behaviour.delayedShare;
      if (delayed) stats.delayed++;
      const wait = delayed
        ? 2 + Math.floor(draw(seed, `delay-slots:${signature}:${count}`) * (behaviour.maxDelaySlots - 1))
        : 1;
      pending.set(signature, {
        bytes,
        signature,
        includeAt: tip + wait,
        price: computeBudgetOf(decodeWireTransaction(bytes).message).unitPrice,
      });
    },
    produce,
    /** Records the state a transaction of the current block is about to overwrite. */
    overwriting(keys: readonly Uint8Array[]) {
      let block = undo.get(tip);
      if (!block) {
        block = new Map();
        undo.set(tip, block);
      }
      for (const key of keys) {
        const id = keyOf(key);
        if (!block.has(id)) block.set(id, { key, before: ledgerAccount(svm.getAccount(key)) });
      }
    },
    /** A faucet transaction landed in the current block: it stays on the main fork. */
    pin() {
      pinned.add(tip);
      if (forkedTip === tip) forkedTip = null;
    },
    /** An account was written outside any transaction (a cheat): its history is rewritten too. */
    forget(key: Uint8Array) {
      const id = keyOf(key);
      for (const block of undo.values()) block.delete(id);
    },
    /** The slot a read at `commitment` sees. */
    slotAt(commitment: Commitment): number {
      if (commitment === 'processed') return tip;
      return commitment === 'confirmed' ? confirmedSlot() : finalizedSlot();
    },
    /** How far a landed transaction's block has come. */
    statusOf(slot: number): { confirmationStatus: Commitment; confirmations: number | null } {
      if (slot <= finalizedSlot()) return { confirmationStatus: 'finalized', confirmations: null };
      return {
        confirmationStatus: slot <= confirmedSlot() ? 'confirmed' : 'processed',
        confirmations: tip - slot,
      };
    },
    /**
     * An account as of the end of slot `at`: the state the first later block overwrote, else
     * `current`.
     */
    accountAt(key: Uint8Array, at: number, current: () => LedgerAccount | null): LedgerAccount | null {
      if (at >= tip) return current();
      const id = keyOf(key);
      for (const [slot, block] of undo) {
        if (slot <= at) continue;
        const entry = block.get(id);
        if (entry) return entry.before;
      }
      return current();
    },
    /** Accounts written after slot `at`, with the state each had then. */
    writtenAfter(at: number): Overwritten[] {
      const seen = new Map<string, Overwritten>();
      for (const [slot, block] of undo) {
        if (slot <= at) continue;
        for (const [id, entry] of block) if (!seen.has(id)) seen.set(id, entry);
      }
      return [...seen.values()];
    },
    /** Whether a slot's block was rolled back (the slot was skipped). */
    isSkipped: (slot: number) => skipped.has(slot),
    /** The going rate of a recent slot's block (0 while calm). */
    rateAt: (slot: number) => rates.get(slot) ?? 0n,
    /** Transactions waiting for a leader. */
    pendingCount: () => pending.size,
    stats: (): ClusterStats => ({ ...stats }),
  };
}
