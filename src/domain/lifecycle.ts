import type { EventType, TransferPhase, TransferStatus } from './transfer.ts';

/*
 * A transfer's life: every move it can make, the phases it may make it from, the phase and status
 * it leads to, and the events it emits (in that order). The store applies a move in one place
 * (src/store/transitions.ts), from the allowed phases only, with its events in the same
 * transaction; nothing else writes a transfer's status or phase. docs/architecture.md shows this
 * table (a test keeps them equal).
 */

/** One move of a transfer's life. */
export interface Transition {
  /** What happened, in words (the table in docs/architecture.md). */
  when: string;
  /** The phases the move is allowed from. */
  from: readonly TransferPhase[];
  /** The phase after it; null: unchanged. */
  to: TransferPhase | null;
  /** The status after it; null: unchanged (it follows the phase, decisions "Status and phase"). */
  status: TransferStatus | null;
  /** The events it emits, in order. */
  events: readonly EventType[];
}

const DEPLOYING: readonly TransferPhase[] = ['quoted', 'funding', 'deploying'];

/** Every move, by name. */
export const TRANSITIONS = {
  created: {
    when: 'a transfer is created: a quote (the store inserts it; no move leads here)',
    from: [],
    to: 'quoted',
    status: 'quote',
    events: ['transfer.quote_created'],
  },
  prepared: {
    when: 'a bundle is handed out (a quote now awaits the source’s signature)',
    from: DEPLOYING,
    to: null,
    status: 'awaiting_signature',
    events: [],
  },
  keeperFunded: {
    when: 'the keeper’s funding is verified or seen on chain',
    from: ['quoted'],
    to: 'funding',
    status: 'awaiting_signature',
    events: ['transfer.phase_changed'],
  },
  deploying: {
    when: 'part of the route is on chain',
    from: ['quoted', 'funding'],
    to: 'deploying',
    status: 'awaiting_signature',
    events: ['transfer.phase_changed'],
  },
  takenOver: {
    when: 'the route is complete on chain with the quoted terms, the keeper funded',
    from: DEPLOYING,
    to: 'executing',
    status: 'processing',
    events: ['transfer.deposit_confirmed', 'transfer.processing', 'transfer.phase_changed'],
  },
  hopLanded: {
    when: 'a hop other than the last is confirmed on chain',
    from: ['executing'],
    to: null,
    status: null,
    events: ['transfer.hop_complete'],
  },
  settled: {
    when: 'the last hop is confirmed and the route shows settled',
    from: ['executing'],
    to: 'settled',
    status: 'completed',
    events: ['transfer.hop_complete', 'transfer.completed', 'transfer.phase_changed'],
  },
  failed: {
    when: 'a hop failed for good and the keeper marked the route failed on chain',
    from: ['executing'],
    to: 'failed',
    status: 'failed',
    events: ['transfer.phase_changed', 'transfer.failed'],
  },
  recoverable: {
    when: 'the route cannot proceed: not the one quoted, abandoned half-deployed, flagged by screening, past its deadline',
    from: [...DEPLOYING, 'executing'],
    to: 'recoverable',
    status: 'failed',
    events: ['transfer.phase_changed', 'transfer.failed', 'transfer.recoverable'],
  },
  expired: {
    when: 'the quote expired with nothing on chain (the keeper’s lamports returned first)',
    from: DEPLOYING,
    to: 'expired',
    status: 'expired',
    events: ['transfer.phase_changed', 'transfer.expired'],
  },
  rescued: {
    when: 'a rescue closed the route',
    from: ['failed', 'recoverable'],
    to: 'rescued',
    status: 'refunded',
    events: ['transfer.rescued', 'transfer.refunded', 'transfer.phase_changed'],
  },
  reclaimed: {
    when: 'the rent of a settled route was reclaimed',
    from: ['settled'],
    to: 'reclaimed',
    status: null,
    events: ['transfer.rent_reclaimed', 'transfer.phase_changed'],
  },
  reclaimedAgain: {
    when: 'what reached a rescued or reclaimed route’s accounts since was reclaimed',
    from: ['rescued', 'reclaimed'],
    to: null,
    status: null,
    events: ['transfer.rent_reclaimed'],
  },
} as const satisfies Record<string, Transition>;

export type TransitionName = keyof typeof TRANSITIONS;

/** Whether `name` may be applied to a transfer in `phase`. */
export function allows(name: TransitionName, phase: TransferPhase): boolean {
  return (TRANSITIONS[name].from as readonly TransferPhase[]).includes(phase);
}
