import type { IntegratorShares } from '../domain/rewards.ts';
import type { Recovery, Transfer, TransferPhase } from '../domain/transfer.ts';
import type { Db, Sql } from './db.ts';
import { appendTransferEvents } from './events.ts';
import { accrueRewards } from './rewards.ts';
import { openKeeperKey } from './route-deployments.ts';
import type { SecretBox } from './secret-box.ts';
import { recoveryRow, type TransferRow, toTransfer } from './transfer-rows.ts';

/** A hop transaction signed by the keeper, stored before it is sent. */
export interface StoredHopTransaction {
  base64: string;
  signature: string;
  /** The last block height at which its blockhash is accepted. */
  validUntil: bigint;
}

/**
 * A route the keeper claimed: its transfer, its keeper's private key, the claim's token, and the
 * next hop's transaction if one was signed.
 */
export interface ClaimedRoute {
  transfer: Transfer;
  keeperPrivateKey: Uint8Array;
  claim: string;
  hopTransaction: StoredHopTransaction | null;
  hopAttempts: number;
}

type ClaimRow = TransferRow & {
  keeper_secret: string;
  keeper_claim: string;
  hop_tx: string | null;
  hop_tx_signature: string | null;
  hop_tx_valid_until: string | null;
  hop_attempts: number;
};

/**
 * The keeper's side of the transfers it took over: claiming routes whose next step is due on the
 * chain's clock, keeping each hop's signed transaction before it is sent, and recording hops,
 * settlement and failure with their events. A claim lasts `leaseMs`: a worker that dies gives its
 * routes back when it lapses, and every write of a worker names its claim, so one whose claim was
 * taken over changes nothing.
 */
export function createKeeperWorkStore(db: Db, secrets: SecretBox) {
  /** Moves a route the keeper gave up on to `phase` with its error and recovery figures, and its events. */
  async function fail(
    tx: Sql,
    transferId: number,
    input: {
      phase: Extract<TransferPhase, 'failed' | 'recoverable'>;
      lastError: { code: string; message: string };
      recovery: Recovery;
      now: Date;
    },
  ): Promise<Transfer | null> {
    const { rows } = await tx.query<TransferRow>(
      `UPDATE transfers
          SET status = 'failed', phase = $2, last_error = $3::jsonb, recovery = $4::jsonb, keeper_due_at = NULL,
              keeper_claim = NULL, keeper_claimed_until = NULL, hop_tx = NULL, hop_tx_signature = NULL,
              hop_tx_valid_until = NULL, updated_at = $5
        WHERE id = $1 AND status = 'processing'
        RETURNING *`,
      [
        transferId,
        input.phase,
        JSON.stringify({ ...input.lastError, at: input.now.toISOString() }),
        JSON.stringify(recoveryRow(input.recovery)),
        input.now,
      ],
    );
    if (!rows[0]) return null;
    const transfer = toTransfer(rows[0]);
    const events =
      input.phase === 'recoverable'
        ? (['transfer.phase_changed', 'transfer.failed', 'transfer.recoverable'] as const)
        : (['transfer.phase_changed', 'transfer.failed'] as const);
    await appendTransferEvents(tx, transfer, events, input.now);
    return transfer;
  }

  return {
    /**
     * Claims up to `limit` routes whose keeper work is due at the chain's time `chainNow`, oldest
     * due first, that no live claim holds and no backoff delays.
     */
    async claimDue(input: {
      chainNow: bigint;
      now: Date;
      leaseMs: number;
      limit: number;
    }): Promise<ClaimedRoute[]> {
      const { rows } = await db.query<ClaimRow>(
        `UPDATE transfers
            SET keeper_claim = gen_random_uuid(),
                keeper_claimed_until = $2::timestamptz + $3 * interval '1 millisecond'
          WHERE id IN (SELECT id FROM transfers
                        WHERE status = 'processing' AND keeper_due_at <= $1
                          AND (keeper_claimed_until IS NULL OR keeper_claimed_until < $2)
                          AND (keeper_retry_at IS NULL OR keeper_retry_at <= $2)
                        ORDER BY keeper_due_at LIMIT $4 FOR UPDATE SKIP LOCKED)
          RETURNING *`,
        [input.chainNow.toString(), input.now, input.leaseMs, input.limit],
      );
      return rows.map((row) => ({
        transfer: toTransfer(row),
        keeperPrivateKey: openKeeperKey(secrets, row.keeper_secret),
        claim: row.keeper_claim,
        hopAttempts: row.hop_attempts,
        hopTransaction:
          row.hop_tx && row.hop_tx_signature && row.hop_tx_valid_until
            ? {
                base64: row.hop_tx,
                signature: row.hop_tx_signature,
                validUntil: BigInt(row.hop_tx_valid_until),
              }
            : null,
      }));
    },

    /**
     * Claims up to `limit` routes taken over whose on-chain deadline has passed by the chain's time
     * `chainNow`, each for `leaseMs` (several processes share the sweep; a route looked at is not
     * looked at again before its claim lapses), earliest deadline first.
     */
    async claimOverdue(input: {
      chainNow: bigint;
      now: Date;
      leaseMs: number;
      limit: number;
    }): Promise<Transfer[]> {
      const { rows } = await db.query<TransferRow>(
        `UPDATE transfers SET next_check_at = $2::timestamptz + $3 * interval '1 millisecond'
          WHERE id IN (SELECT id FROM transfers
                        WHERE status = 'processing' AND deadline_at < $1
                          AND (next_check_at IS NULL OR next_check_at <= $2)
                        ORDER BY deadline_at LIMIT $4 FOR UPDATE SKIP LOCKED)
          RETURNING *`,
        [input.chainNow.toString(), input.now, input.leaseMs, input.limit],
      );
      return rows.map(toTransfer);
    },

    /** When the keeper next has work on any route (chain unix seconds), or null when none is left. */
    async nextDueAt(): Promise<bigint | null> {
      const { rows } = await db.query<{ due: string | null }>(
        `SELECT min(keeper_due_at) AS due FROM transfers WHERE status = 'processing'`,
      );
      return rows[0]?.due ? BigInt(rows[0].due) : null;
    },

    /** Keeps the next hop's signed transaction before it is sent; false when the claim is no longer this worker's. */
    async storeHopTransaction(
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
    },

    /**
     * Gives a claimed route back: due again at `dueAt` (chain seconds) and, after a transient
     * failure, not before `retryAt`; `forgetHopTransaction` drops a stored transaction whose
     * blockhash expired unlanded.
     */
    async release(
      transferId: number,
      claim: string,
      input: { dueAt?: bigint; retryAt?: Date | null; attempts?: number; forgetHopTransaction?: boolean },
    ): Promise<void> {
      await db.query(
        `UPDATE transfers
            SET keeper_claim = NULL, keeper_claimed_until = NULL,
                keeper_due_at = coalesce($3, keeper_due_at), keeper_retry_at = $4,
                hop_attempts = coalesce($5, hop_attempts),
                hop_tx = CASE WHEN $6 THEN NULL ELSE hop_tx END,
                hop_tx_signature = CASE WHEN $6 THEN NULL ELSE hop_tx_signature END,
                hop_tx_valid_until = CASE WHEN $6 THEN NULL ELSE hop_tx_valid_until END
          WHERE id = $1 AND keeper_claim = $2`,
        [
          transferId,
          claim,
          input.dueAt?.toString() ?? null,
          input.retryAt ?? null,
          input.attempts ?? null,
          input.forgetHopTransaction ?? false,
        ],
      );
    },

    /**
     * Records hop `step` (0-based) as landed with its signature: `progress.hopsCompleted` moves on,
     * the next step is due at `nextDueAt`, event `hop_complete`. On the last hop (the route settled
     * on chain), `settled` carries what reclaim gives back and the integrator's shares of what the
     * route paid: status `completed`, phase `settled`, `completedAt`, events `completed` and
     * `phase_changed`, and those shares credited to its rewards.
     * Records each hop once: a hop recorded already answers null.
     */
    async recordHop(
      tx: Sql,
      transferId: number,
      input: {
        step: number;
        signature: string;
        nextDueAt: bigint | null;
        settled: { recovery: Recovery; shares: IntegratorShares } | null;
        now: Date;
      },
    ): Promise<Transfer | null> {
      const settled = input.settled !== null;
      const { rows } = await tx.query<TransferRow>(
        `UPDATE transfers
            SET hops_completed = hops_completed + 1,
                signatures = jsonb_set(signatures, '{hops}', (signatures -> 'hops') || to_jsonb($3::text)),
                keeper_due_at = $4, keeper_retry_at = NULL, hop_attempts = 0,
                hop_tx = NULL, hop_tx_signature = NULL, hop_tx_valid_until = NULL,
                keeper_claim = NULL, keeper_claimed_until = NULL,
                status = CASE WHEN $5 THEN 'completed' ELSE status END,
                phase = CASE WHEN $5 THEN 'settled' ELSE phase END,
                completed_at = CASE WHEN $5 THEN $7::timestamptz ELSE completed_at END,
                recovery = CASE WHEN $5 THEN $6::jsonb ELSE recovery END,
                updated_at = $7
          WHERE id = $1 AND status = 'processing' AND hops_completed = $2
          RETURNING *`,
        [
          transferId,
          input.step,
          input.signature,
          input.nextDueAt?.toString() ?? null,
          settled,
          input.settled ? JSON.stringify(recoveryRow(input.settled.recovery)) : null,
          input.now,
        ],
      );
      if (!rows[0]) return null;
      const transfer = toTransfer(rows[0]);
      await appendTransferEvents(
        tx,
        transfer,
        settled
          ? ['transfer.hop_complete', 'transfer.completed', 'transfer.phase_changed']
          : ['transfer.hop_complete'],
        input.now,
      );
      if (input.settled) await accrueRewards(tx, transfer, input.settled.shares, input.now);
      return transfer;
    },

    /** The keeper declared the route failed on chain after a permanent hop failure: status and phase `failed`. */
    markFailed: (
      tx: Sql,
      transferId: number,
      input: { lastError: { code: string; message: string }; recovery: Recovery; now: Date },
    ) => fail(tx, transferId, { ...input, phase: 'failed' }),

    /**
     * The route cannot proceed for another reason (screening flagged it, its deadline passed):
     * status `failed`, phase `recoverable`.
     */
    markRecoverable: (
      tx: Sql,
      transferId: number,
      input: { lastError: { code: string; message: string }; recovery: Recovery; now: Date },
    ) => fail(tx, transferId, { ...input, phase: 'recoverable' }),
  };
}

export type KeeperWorkStore = ReturnType<typeof createKeeperWorkStore>;
