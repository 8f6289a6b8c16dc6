import type { IntegratorShares } from '../domain/rewards.ts';
import type { Recovery, Transfer } from '../domain/transfer.ts';
import { claimDueHops, type StoredHopTransaction } from './claims/due-hops.ts';
import { claimOverdueRoutes } from './claims/overdue-routes.ts';
import type { Db, Sql } from './db.ts';
import { accrueRewards } from './rewards.ts';
import type { SecretBox } from './secret-box.ts';
import { applyMove, type Reason } from './transitions.ts';

export type { ClaimedRoute, StoredHopTransaction } from './claims/due-hops.ts';

/** What a claim of routes takes: the chain's time, this process's, the lease and how many at most. */
type RouteClaim = { chainNow: bigint; now: Date; leaseMs: number; limit: number };

/** How a claimed route is given back (see {@link releaseRoute}). */
interface HopRelease {
  dueAt?: bigint;
  retryAt?: Date | null;
  attempts?: number;
  forgetHopTransaction?: boolean;
  /** What a transaction of the keeper that landed (and failed) on the route paid. */
  feesPaid?: bigint;
  /** The least price of the next hop transaction, after one expired unlanded. */
  leastPriceMicroLamports?: bigint;
}

/** What follows a landed hop: the next one due at `nextDueAt`, or, after the last, the settlement. */
type AfterHop = { nextDueAt: bigint } | { settled: { recovery: Recovery; shares: IntegratorShares } };

/**
 * The keeper's side of the transfers it took over: claiming routes whose next step is due on the
 * chain's clock, keeping each hop's signed transaction before it is sent, and recording hops,
 * settlement and failure with their events. A claim lasts `leaseMs`: a worker that dies gives its
 * routes back when it lapses, and every write of a worker names its claim, so one whose claim was
 * taken over changes nothing.
 */
export function createHopStore(db: Db, secrets: SecretBox) {
  return {
    claimDue: (input: RouteClaim) => claimDueHops(db, secrets, input),
    claimOverdue: (input: RouteClaim) => claimOverdueRoutes(db, input),
    nextWork: (now: Date) => nextWork(db, now),
    storeHopTransaction: (transferId: number, claim: string, hop: StoredHopTransaction) =>
      storeHopTransaction(db, transferId, claim, hop),
    release: (transferId: number, claim: string, input: HopRelease) =>
      releaseRoute(db, transferId, claim, input),
    recordHop,
    markFailed,
  };
}

export type HopStore = ReturnType<typeof createHopStore>;

/** When the keeper next has work: a step falling due (chain seconds) or a backoff ending. */
export interface NextWork {
  /** The earliest due step of a route no live claim holds nor backoff delays, or null. */
  dueAt: bigint | null;
  /** The earliest end of a backoff, or null. */
  retryAt: Date | null;
}

/**
 * When the keeper next has work on a route no live claim holds: a route in a worker's hands is
 * not waited for again, and one in backoff is waited for until its backoff ends.
 */
async function nextWork(db: Db, now: Date): Promise<NextWork> {
  const { rows } = await db.query<{ due: string | null; retry: Date | null }>(
    `SELECT min(keeper_due_at) FILTER (WHERE keeper_retry_at IS NULL OR keeper_retry_at <= $1) AS due,
            min(keeper_retry_at) FILTER (WHERE keeper_retry_at > $1) AS retry
       FROM transfers
      WHERE status = 'processing' AND (keeper_claimed_until IS NULL OR keeper_claimed_until < $1)`,
    [now],
  );
  return { dueAt: rows[0]?.due ? BigInt(rows[0].due) : null, retryAt: rows[0]?.retry ?? null };
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
 * failure, not before `retryAt`; `forgetHopTransaction` drops a stored transaction that expired
 * unlanded or whose outcome was answered, in the same write as the fees it paid and the price the
 * next one starts from, so that neither is lost nor counted twice.
 */
async function releaseRoute(db: Db, transferId: number, claim: string, input: HopRelease): Promise<void> {
  await db.query(
    `UPDATE transfers
        SET keeper_claim = NULL, keeper_claimed_until = NULL,
            keeper_due_at = coalesce($3, keeper_due_at), keeper_retry_at = $4,
            hop_attempts = coalesce($5, hop_attempts),
            hop_tx = CASE WHEN $6 THEN NULL ELSE hop_tx END,
            hop_tx_signature = CASE WHEN $6 THEN NULL ELSE hop_tx_signature END,
            hop_tx_valid_until = CASE WHEN $6 THEN NULL ELSE hop_tx_valid_until END,
            hop_fees_spent_lamports = hop_fees_spent_lamports + $7,
            hop_least_price_micro_lamports = coalesce($8, hop_least_price_micro_lamports)
      WHERE id = $1 AND keeper_claim = $2`,
    [
      transferId,
      claim,
      input.dueAt?.toString() ?? null,
      input.retryAt ?? null,
      input.attempts ?? null,
      input.forgetHopTransaction ?? false,
      (input.feesPaid ?? 0n).toString(),
      input.leastPriceMicroLamports?.toString() ?? null,
    ],
  );
}

/**
 * Records hop `step` (0-based) as landed with its signature and the fees it paid:
 * `progress.hopsCompleted` moves on and the next step is due at `nextDueAt`; or, on the last hop
 * (the route settled on chain), the transfer settles with what reclaim gives back, and the
 * integrator's shares of what the route paid are credited to its rewards.
 * Records each hop once: a hop recorded already answers null.
 */
async function recordHop(
  tx: Sql,
  transferId: number,
  input: { step: number; signature: string; feesPaid: bigint; then: AfterHop; now: Date },
): Promise<Transfer | null> {
  const { step, signature, feesPaid, then, now } = input;
  if ('nextDueAt' in then) {
    const move = { name: 'hopLanded', step, signature, feesPaid, nextDueAt: then.nextDueAt } as const;
    return applyMove(tx, transferId, move, now);
  }
  const { recovery, shares } = then.settled;
  const move = { name: 'settled', step, signature, feesPaid, recovery } as const;
  const transfer = await applyMove(tx, transferId, move, now);
  if (transfer) await accrueRewards(tx, transfer, shares, now);
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
