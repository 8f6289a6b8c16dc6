// Slots and blocks of the local chain. A slot lasts `slotMs` of chain time, which is the injected
// wall clock plus an offset that only time travel grows, so it never goes back, even across
// restarts. Every slot is a block (none is skipped, so block height equals the slot), and its
// blockhash is derived from the genesis hash and the slot number, so any block can be described
// without storing anything per slot. Each new slot rewrites the Clock and SlotHashes sysvars, which
// programs read (address lookup tables need their creation slot in SlotHashes).
import { createHash } from 'node:crypto';
import { type LiteSvm, Clock as SvmClock } from 'litesvm/dist/internal.js';
import { decodeBase58Exact, encodeBase58 } from './base58.ts';
import type { Clock } from './clock.ts';

/** Slots a blockhash stays usable, as on every cluster (MAX_PROCESSING_AGE). */
export const BLOCKHASH_VALID_SLOTS = 150;

/** How long a slot lasts unless told otherwise, as on the clusters. */
export const DEFAULT_SLOT_MS = 400;
/** Slots per epoch (no warm-up, as on mainnet). */
export const SLOTS_PER_EPOCH = 432_000;
/** Entries of the SlotHashes sysvar (its MAX_ENTRIES). */
const SLOT_HASHES_ENTRIES = 512;

/** What the slot clock saves to resume from. */
export interface SlotsState {
  slot: number;
  chainTimeMs: number;
  /** `[slot, chain ms at its start]`: each slot is timed from the last anchor at or before it. */
  anchors: [number, number][];
}

/** The slot clock and block identities of one chain. */
export type Slots = ReturnType<typeof createSlots>;

/** Creates the slot clock, fresh at slot 0 or resumed from saved state. */
export function createSlots(options: {
  svm: LiteSvm;
  clock: Clock;
  slotMs: number;
  genesisHash: string;
  restored?: SlotsState;
  /**
   * Produce every slot in turn, even when a request comes after several (the mainnet profile's
   * leaders produce a block in each); jumps of more than a blockhash's life are still made at once.
   */
  stepwise?: boolean;
}) {
  const { svm, clock, slotMs, restored } = options;
  const genesis = decodeBase58Exact(options.genesisHash, 32) as Uint8Array;
  const listeners = new Set<(slot: number) => void>();
  // Usable blockhashes and their slots, oldest first.
  const window = new Map<string, number>();
  let slot = restored?.slot ?? 0;
  let offsetMs = restored ? Math.max(0, restored.chainTimeMs - clock.now().getTime()) : 0;
  const anchors: [number, number][] = restored ? [...restored.anchors] : [[0, clock.now().getTime()]];

  function chainNowMs(): number {
    return clock.now().getTime() + offsetMs;
  }

  function startOfSlot(s: number): number {
    let anchor = anchors[0] as [number, number];
    for (let i = anchors.length - 1; i >= 0; i--) {
      const candidate = anchors[i] as [number, number];
      if (candidate[0] <= s) {
        anchor = candidate;
        break;
      }
    }
    return anchor[1] + (s - anchor[0]) * slotMs;
  }

  function hashBytes(s: number): Buffer {
    const number = Buffer.alloc(8);
    number.writeBigUInt64LE(BigInt(s));
    return createHash('sha256').update(genesis).update(number).digest();
  }

  // SlotHashes is rewritten every slot from its 512 newest blockhashes: they are computed once.
  const recentHashes = new Map<number, string>();
  function blockhashAt(s: number): string {
    let hash = recentHashes.get(s);
    if (hash === undefined) {
      hash = encodeBase58(hashBytes(s));
      recentHashes.set(s, hash);
      if (recentHashes.size > 2 * SLOT_HASHES_ENTRIES) {
        for (const old of recentHashes.keys()) if (old < slot - SLOT_HASHES_ENTRIES) recentHashes.delete(old);
      }
    }
    return hash;
  }

  function unixSecondsAt(s: number): number {
    return Math.floor(startOfSlot(s) / 1000);
  }

  function writeSysvars() {
    const epoch = Math.floor(slot / SLOTS_PER_EPOCH);
    svm.setClock(
      new SvmClock(
        BigInt(slot),
        BigInt(unixSecondsAt(epoch * SLOTS_PER_EPOCH)),
        BigInt(epoch),
        BigInt(epoch + 1),
        BigInt(unixSecondsAt(slot)),
      ),
    );
    const hashes = [];
    for (let s = slot; s >= 0 && s > slot - SLOT_HASHES_ENTRIES; s--) {
      hashes.push({ slot: BigInt(s), hash: blockhashAt(s) });
    }
    svm.setSlotHashes(hashes);
  }

  function advanceTo(target: number) {
    // LiteSVM's own blockhash seeds durable nonces, which must change from one slot to the next.
    svm.expireBlockhash();
    for (let s = Math.max(slot + 1, target - BLOCKHASH_VALID_SLOTS); s <= target; s++) {
      window.set(blockhashAt(s), s);
    }
    for (const [key, at] of window) {
      if (at >= target - BLOCKHASH_VALID_SLOTS) break;
      window.delete(key);
    }
    slot = target;
    writeSysvars();
    for (const listener of listeners) listener(slot);
  }

  /** Produces the slots that chain time says are due. */
  function sync() {
    const [anchorSlot, anchorMs] = anchors.at(-1) as [number, number];
    const target = anchorSlot + Math.floor((chainNowMs() - anchorMs) / slotMs);
    if (target <= slot) return;
    if (options.stepwise && target - slot <= BLOCKHASH_VALID_SLOTS) {
      while (slot < target) advanceTo(slot + 1);
    } else advanceTo(target);
  }

  for (let s = Math.max(0, slot - BLOCKHASH_VALID_SLOTS); s <= slot; s++) window.set(blockhashAt(s), s);
  if (restored) {
    // The current slot keeps the time it had; the next one starts once the rest of it has passed
    // after the restart, so downtime produces no slots.
    const elapsed =
      anchors.length === 0 ? 0 : Math.min(slotMs, Math.max(0, restored.chainTimeMs - startOfSlot(slot)));
    anchors.push([slot + 1, chainNowMs() + slotMs - elapsed]);
  }
  writeSysvars();

  return {
    sync,
    chainNowMs,
    startOfSlot,
    blockhashAt,
    unixSecondsAt,
    /** The current slot, as last synced. */
    current: () => slot,
    /** The newest blockhash and the last block height it is valid at. */
    latest: () => ({ blockhash: blockhashAt(slot), lastValidBlockHeight: slot + BLOCKHASH_VALID_SLOTS }),
    /** A slot whose block was rolled back: its blockhash is unknown to the chain. */
    skip(s: number) {
      window.delete(blockhashAt(s));
    },
    /** The slot of a still-usable blockhash, or undefined. */
    blockhashSlot(blockhash: string): number | undefined {
      const at = window.get(blockhash);
      return at !== undefined && slot - at <= BLOCKHASH_VALID_SLOTS ? at : undefined;
    },
    /**
     * Moves chain time forward to `ms` (never back), producing the slots in between. Arriving in
     * the middle of a slot, a new slot starts at `ms`, so the Clock sysvar reads the time moved to.
     */
    moveTo(ms: number) {
      const now = chainNowMs();
      if (ms > now) offsetMs += ms - now;
      sync();
      if (startOfSlot(slot) < ms) {
        anchors.push([slot + 1, ms]);
        advanceTo(slot + 1);
      }
    },
    /** Calls `listener` with each new slot; returns the unsubscribe function. */
    onSlot(listener: (slot: number) => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    state: (): SlotsState => ({ slot, chainTimeMs: chainNowMs(), anchors: [...anchors] }),
  };
}
