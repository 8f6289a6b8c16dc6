import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allows, TRANSITIONS, type TransitionName } from './lifecycle.ts';
import { TRANSFER_PHASES, type TransferPhase, type TransferStatus } from './transfer.ts';

/** Decisions, "Status and phase": the status each phase shows (`quoted`: `quote` until prepared). */
const STATUS_OF: Record<TransferPhase, TransferStatus[]> = {
  quoted: ['quote', 'awaiting_signature'],
  funding: ['awaiting_signature'],
  deploying: ['awaiting_signature'],
  executing: ['processing'],
  settled: ['completed'],
  reclaimed: ['completed'],
  failed: ['failed'],
  recoverable: ['failed'],
  rescued: ['refunded'],
  expired: ['expired'],
};

const names = Object.keys(TRANSITIONS) as TransitionName[];

test('each move leads to a phase and a status the decisions pair', () => {
  for (const name of names) {
    const { from, to, status } = TRANSITIONS[name];
    for (const phase of from) {
      const after = to ?? phase;
      const shown = status ?? STATUS_OF[phase][STATUS_OF[phase].length - 1]!;
      assert.ok(STATUS_OF[after].includes(shown), `${name} from ${phase}: ${after} shows ${shown}`);
    }
  }
});

test('every move is allowed from its phases and refused from every other', () => {
  const allowed: Record<TransitionName, TransferPhase[]> = {
    created: [],
    prepared: ['quoted', 'funding', 'deploying'],
    keeperFunded: ['quoted'],
    deploying: ['quoted', 'funding'],
    takenOver: ['quoted', 'funding', 'deploying'],
    hopLanded: ['executing'],
    settled: ['executing'],
    failed: ['executing'],
    recoverable: ['quoted', 'funding', 'deploying', 'executing'],
    expired: ['quoted', 'funding', 'deploying'],
    rescued: ['failed', 'recoverable'],
    reclaimed: ['settled'],
    reclaimedAgain: ['rescued', 'reclaimed'],
  };
  assert.deepEqual(names.sort(), (Object.keys(allowed) as TransitionName[]).sort());
  for (const name of names) {
    for (const phase of TRANSFER_PHASES) {
      assert.equal(allows(name, phase), allowed[name].includes(phase), `${name} from ${phase}`);
    }
  }
});

test('a phase change is announced, and each status change with its own event', () => {
  const statusEvent: Partial<Record<TransferStatus, string>> = {
    processing: 'transfer.processing',
    completed: 'transfer.completed',
    failed: 'transfer.failed',
    expired: 'transfer.expired',
    refunded: 'transfer.refunded',
  };
  for (const name of names) {
    const { from, to, status, events } = TRANSITIONS[name];
    const changesPhase = to !== null && from.every((phase) => phase !== to);
    assert.equal(
      (events as readonly string[]).includes('transfer.phase_changed'),
      changesPhase && name !== 'created',
      `${name}: phase_changed`,
    );
    const event = status && statusEvent[status];
    if (event) assert.ok((events as readonly string[]).includes(event), `${name}: ${event}`);
  }
  assert.deepEqual(TRANSITIONS.takenOver.events, [
    'transfer.deposit_confirmed',
    'transfer.processing',
    'transfer.phase_changed',
  ]);
  assert.deepEqual(TRANSITIONS.hopLanded.events, ['transfer.hop_complete']);
  assert.deepEqual(TRANSITIONS.reclaimedAgain.events, ['transfer.rent_reclaimed']);
});
