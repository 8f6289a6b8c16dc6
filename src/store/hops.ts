import type { IntegratorShares } from '../domain/rewards.ts';
import type { Recovery, Transfer } from '../domain/transfer.ts';
import { claimDueHops, type DueHopsClaim, type StoredHopTransaction } from './claims/due-hops.ts';
import { claimOverdueRoutes } from './claims/overdue-routes.ts';
import type { Db, Sql } from './db.ts';
import { countHopLateness } from './hop-lateness.ts';
import { accrueRewards } from './rewards.ts';
import type { SecretBox } from './secret-box.ts';
import { applyMove, type Reason } from './transitions.ts';

export type { ClaimedRoute, StoredHopTransaction } from './claims/due-hops.ts';

/** What the overdue sweep's claim takes: the chain's time, this process's, how long a look holds and how many at most. */
type OverdueClaim = { chainNow: bigint; now: Date; leaseMs: number; limit: number };

/** How a claimed route is given back (see {@link releaseRoute}). */
interface HopRelease {
  dueAt?: bigint;
  retryAt?: Date | null;
  attempts?: number;
  forgetHopTransaction?: boolean;
  /** What the stored transaction, answered and forgotten, paid (it may have landed and failed). */
  feesPaid?: bigint;
}

/** What follows a landed hop: the next one due at `nextDueAt`, or, after the last, the settlement. */
type AfterHop = { nextDueAt: bigint } | { settled: { recovery: Recovery; shares: IntegratorShares } };

/**
 * The keeper's side of the transfers it took over: claiming routes whose next step is due on the
 * chain's clock, keeping each hop's signed transaction before it is sent, and recording hops,
 * settlement and failure with their events. A claim holds while its worker process is alive: a
 * worker that dies gives its routes back seconds later, and every write of a worker names its
 * claim, so one whose claim was taken over changes nothing.
 */
export function createHopStore(db: Db, secrets: SecretBox) {
  return {
    claimDue: (input: DueHopsClaim) => claimDueHops(db, secrets, input),
    claimOverdue: (input: OverdueClaim) => claimOverdueRoutes(db, input),
    nextWork: (now: Date, worker: string) => nextWork(db, now, worker),
    storeHopTransaction: (transferId: number, claim: string, hop: StoredHopTransaction) =>
      storeHopTransaction(db, transferId, claim, hop),
    release: (transferId: number, claim: string, input: HopRelease) =>
      releaseRoute(db, transferId, claim, input),
    recordHop,
    markFailed,
  };
}

export type HopStore = ReturnType<typeof createHopStore>;

/** When the keeper next has work: a step falling due (chain seconds), a backoff ending, or a holder dying. */
export interface NextWork {
  /** The earliest due step of a route no live worker holds nor backoff delays, or null. */
  dueAt: bigint | null;
  /** The earliest end of a backoff, or null. */
  retryAt: Date | null;
  /**
   * Milliseconds until the earliest worker holding a route would be counted dead if it fell
   * silent now, or null when no other worker holds one: its routes may be free from then on.
   */
  heldMs: number | null;
}

/**
 * When the keeper next has work on a route no live worker holds: a route in a worker's hands is
 * not waited for again until its worker could be dead, and one in backoff is waited for until its
 * backoff ends.
 */
async function nextWork(db: Db, now: Date, worker: string): Promise<NextWork> {
  const { rows } = await db.query<{ due: string | null; retry: Date | null; held_ms: number | null }>(
    `SELECT min(keeper_due_at) FILTER (WHERE keeper_retry_at IS NULL OR keeper_retry_at <= $1) AS due,
            min(keeper_retry_at) FILTER (WHERE keeper_retry_at > $1) AS retry,
            (SELECT extract(epoch FROM min(alive_until) - clock_timestamp()) * 1000
               FROM live_workers
              WHERE id <> $2 AND id IN (SELECT keeper_claimed_by FROM transfers WHERE status = 'processing'))::float8
              AS held_ms
       FROM transfers
      WHERE status = 'processing'
        AND (keeper_claimed_by IS NULL OR keeper_claimed_by NOT IN (SELECT id FROM live_workers))`,
    [now, worker],
  );
  const row = rows[0];
  return {
    dueAt: row?.due ? BigInt(row.due) : null,
    retryAt: row?.retry ?? null,
    heldMs: row?.held_ms ?? null,
  };
}

/** Keeps the next hop's signed transaction before it is sent; false when the claim is no longer this worker's. */
async function storeHopTransaction(
  db: Db,
  transferId: number,
  claim: string,
  hop: StoredHopTransaction,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE transfers SET hop_tx = $3, hop_tx_signature = $4, hop_tx_valid_until = $5
      WHERE id = $1 AND keeper_claim = $2 AND status = 'processing'`,
    [transferId, claim, hop.base64, hop.signature, hop.validUntil.toString()],
  );
  return rowCount === 1;
}

/**
 * Gives a claimed route back: due again at `dueAt` (chain seconds) and, after a transient
 * failure, not before `retryAt`; `forgetHopTransaction` drops a stored transaction whose outcome
 * was answered, in the same write as the fees it paid, so that they are counted once.
 */
async function releaseRoute(db: Db, transferId: number, claim: string, input: HopRelease): Promise<void> {
  await db.query(
    `UPDATE transfers
        SET keeper_claim = NULL, keeper_claimed_by = NULL,
            keeper_due_at = coalesce($3, keeper_due_at), keeper_retry_at = $4,
            hop_attempts = coalesce($5, hop_attempts),
            hop_tx = CASE WHEN $6 THEN NULL ELSE hop_tx END,
            hop_tx_signature = CASE WHEN $6 THEN NULL ELSE hop_tx_signature END,
            hop_tx_valid_until = CASE WHEN $6 THEN NULL ELSE hop_tx_valid_until END,
            hop_fees_spent_lamports = hop_fees_spent_lamports + $7
      WHERE id = $1 AND keeper_claim = $2`,
    [
      transferId,
      claim,
      input.dueAt?.toString() ?? null,
      input.retryAt ?? null,
      input.attempts ?? null,
      input.forgetHopTransaction ?? false,
      (input.feesPaid ?? 0n).toString(),
    ],
  );
}

/**
 * Records hop `step` (0-based) as landed with its signature and the fees it paid:
 * `progress.hopsCompleted` moves on and the next step is due at `nextDueAt`; or, on the last hop
 * (the route settled on chain), the transfer settles with what reclaim gives back, and the
 * integrator's shares of what the route paid are credited to its rewards. Either way the hop's
 * lateness is counted for the keeper's page.
 * Records each hop once: a hop recorded already answers null.
 */
async function recordHop(
  tx: Sql,
  transferId: number,
  input: { step: number; signature: string; feesPaid: bigint; then: AfterHop; now: Date },
): Promise<Transfer | null> {
  const { step, signature, feesPaid, then, now } = input;
  let transfer: Transfer | null;
  if ('nextDueAt' in then) {
    const move = { name: 'hopLanded', step, signature, feesPaid, nextDueAt: then.nextDueAt } as const;
    transfer = await applyMove(tx, transferId, move, now);
  } else {
    const { recovery, shares } = then.settled;
    const move = { name: 'settled', step, signature, feesPaid, recovery } as const;
    transfer = await applyMove(tx, transferId, move, now);
    if (transfer) await accrueRewards(tx, transfer, shares, now);
  }
  if (transfer) await countHopLateness(tx, { transferId, step, recordedAt: now });
  return transfer;
}

/** The keeper declared the route failed on chain after a permanent hop failure: status and phase `failed`. */
function markFailed(
  tx: Sql,
  transferId: number,
  input: { lastError: Reason; recovery: Recovery; now: Date },
): Promise<Transfer | null> {
  const move = { name: 'failed', lastError: input.lastError, recovery: input.recovery } as const;
  return applyMove(tx, transferId, move, input.now);
}
