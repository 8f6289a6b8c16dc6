import { TRANSITIONS, type Transition } from '../domain/lifecycle.ts';
import type { RouteSchedule } from '../domain/route.ts';
import type { LastError, Recovery, Transfer } from '../domain/transfer.ts';
import { KEEPER_CHANNEL } from './channels.ts';
import type { Sql } from './db.ts';
import { appendTransferEvents } from './events.ts';
import { recoveryRow, type TransferRow, toTransfer } from './transfer-rows.ts';

/*
 * The one place a transfer's status and phase change (src/domain/lifecycle.ts names every move):
 * one UPDATE, which holds the row until the caller's transaction ends, applies a move only from
 * the phases the domain allows, writes what the move records, and appends the move's events in the
 * same transaction. A test keeps every other write of `status` or `phase` out of src/.
 */

/** Signatures the source reported and the service verified on chain. */
export interface VerifiedSignatures {
  routeInit: readonly string[];
  sessionInit: readonly string[];
  orchestrator: string | null;
}

/** Why a route cannot finish, as `lastError` shows it (its `at` is the move's time). */
export type Reason = Omit<LastError, 'at'>;

/** A move and what it records besides status and phase. */
export type Move =
  | { name: 'prepared'; keeperFundingInBundle: boolean }
  | { name: 'keeperFunded' }
  | { name: 'deploying' }
  | { name: 'takenOver'; signatures: VerifiedSignatures; schedule: RouteSchedule; keeperDueAt: bigint }
  | { name: 'hopLanded'; step: number; signature: string; feesPaid: bigint; nextDueAt: bigint }
  | { name: 'settled'; step: number; signature: string; feesPaid: bigint; recovery: Recovery }
  | { name: 'failed' | 'recoverable'; lastError: Reason; recovery: Recovery }
  | { name: 'expired' }
  | { name: 'rescued' | 'reclaimed' | 'reclaimedAgain' };

/** The columns a move writes (SQL after `SET`, parameters from `$first`) and what else it requires. */
interface Writes {
  set: string[];
  params: unknown[];
  /** More conditions the row must meet (`AND …`). */
  where?: string;
}

/** A worker's hold on a route and its stored hop, given up once a hop is recorded. */
const CLAIM_RELEASED = [
  'keeper_claim = NULL',
  'keeper_claimed_by = NULL',
  'keeper_retry_at = NULL',
  'hop_tx = NULL',
  'hop_tx_signature = NULL',
  'hop_tx_valid_until = NULL',
];
/** The same, with nothing more due: the keeper's work on the route is over. */
const KEEPER_RELEASED = ['keeper_due_at = NULL', ...CLAIM_RELEASED];

/** What `move` writes; `p(n)` names its n-th parameter. */
function writesOf(move: Move, p: (index: number) => string, now: Date): Writes {
  switch (move.name) {
    case 'prepared':
      return { set: [`keeper_funding_in_bundle = ${p(0)}`], params: [move.keeperFundingInBundle] };
    case 'keeperFunded':
    case 'deploying':
    case 'rescued':
    case 'reclaimed':
    case 'reclaimedAgain':
      return { set: [], params: [] };
    case 'takenOver':
      return {
        set: [
          `deposit_received_at = ${p(0)}`,
          `first_release_at = ${p(1)}`,
          `interval_seconds = ${p(2)}`,
          `deadline_at = ${p(3)}`,
          `signatures = jsonb_set(jsonb_set(signatures, '{routeInit}', ${p(4)}::jsonb), '{sessionInit}', ${p(5)}::jsonb)`,
          `orchestrator_signature = coalesce(${p(6)}, orchestrator_signature)`,
          `keeper_due_at = ${p(7)}`,
        ],
        params: [
          now,
          move.schedule.firstReleaseAt.toString(),
          move.schedule.intervalSecs,
          move.schedule.deadlineAt.toString(),
          JSON.stringify(move.signatures.routeInit),
          JSON.stringify(move.signatures.sessionInit),
          move.signatures.orchestrator,
          move.keeperDueAt.toString(),
        ],
        where: `status = 'awaiting_signature'`,
      };
    case 'hopLanded':
    case 'settled': {
      const hop = {
        set: [
          'hops_completed = hops_completed + 1',
          `signatures = jsonb_set(signatures, '{hops}', (signatures -> 'hops') || to_jsonb(${p(0)}::text))`,
          'hop_attempts = 0',
          `hop_fees_spent_lamports = hop_fees_spent_lamports + ${p(2)}`,
        ],
        params: [move.signature, move.step, move.feesPaid.toString()] as unknown[],
        where: `hops_completed = ${p(1)}`,
      };
      if (move.name === 'hopLanded') {
        hop.set.push(`keeper_due_at = ${p(3)}`, ...CLAIM_RELEASED);
        hop.params.push(move.nextDueAt.toString());
        return hop;
      }
      hop.set.push(`completed_at = ${p(3)}`, `recovery = ${p(4)}::jsonb`, ...KEEPER_RELEASED);
      hop.params.push(now, JSON.stringify(recoveryRow(move.recovery)));
      return hop;
    }
    case 'failed':
    case 'recoverable':
      return {
        set: [`last_error = ${p(0)}::jsonb`, `recovery = ${p(1)}::jsonb`, ...KEEPER_RELEASED],
        params: [
          JSON.stringify({ ...move.lastError, at: now.toISOString() }),
          JSON.stringify(recoveryRow(move.recovery)),
        ],
      };
    case 'expired':
      return { set: [`expired_at = ${p(0)}`], params: [now] };
  }
}

/**
 * Applies `move` to a transfer in the caller's transaction: from a phase the domain allows (and
 * what else the move requires), its status and phase, what it records, and its events. Answers
 * the transfer after the move, or null when the transfer was not in a state that allows it (another
 * process moved it first, or it never could): nothing is written then.
 */
export async function applyMove(
  tx: Sql,
  transferId: number,
  move: Move,
  now: Date,
): Promise<Transfer | null> {
  const transition: Transition = TRANSITIONS[move.name];
  const fixed = [transferId, transition.from, transition.status, transition.to, now];
  const writes = writesOf(move, (index) => `$${fixed.length + 1 + index}`, now);
  const { rows } = await tx.query<TransferRow>(
    `UPDATE transfers
        SET status = coalesce($3, status), phase = coalesce($4, phase), updated_at = $5${writes.set.map((column) => `, ${column}`).join('')}
      WHERE id = $1 AND phase = ANY($2::text[])${writes.where ? ` AND ${writes.where}` : ''}
      RETURNING *`,
    [...fixed, ...writes.params],
  );
  if (!rows[0]) return null;
  const transfer = toTransfer(rows[0]);
  // A route taken over is the keeper's from now: a waiting worker hears of it at commit.
  if (move.name === 'takenOver')
    await tx.query('SELECT pg_notify($1, $2)', [KEEPER_CHANNEL, String(transferId)]);
  await appendTransferEvents(tx, transfer, transition.events, now);
  return transfer;
}
