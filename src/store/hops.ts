import type { IntegratorShares } from '../domain/rewards.ts';
import type { Recovery, Transfer } from '../domain/transfer.ts';
import type { Db, Sql } from './db.ts';
import { openKeeperKey } from './deployments.ts';
import { accrueRewards } from './rewards.ts';
import type { SecretBox } from './secret-box.ts';
import { type TransferRow, toTransfer } from './transfer-rows.ts';
import { applyMove, type Reason } from './transitions.ts';

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
export function createHopStore(db: Db, secrets: SecretBox) {
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
     * Records hop `step` (0-based) as landed with its signature: `progress.hopsCompleted` moves on
     * and the next step is due at `nextDueAt`; or, on the last hop (the route settled on chain), the
     * transfer settles with what reclaim gives back, and the integrator's shares of what the route
     * paid are credited to its rewards.
     * Records each hop once: a hop recorded already answers null.
     */
    async recordHop(
      tx: Sql,
      transferId: number,
      input: {
        step: number;
        signature: string;
        then: { nextDueAt: bigint } | { settled: { recovery: Recovery; shares: IntegratorShares } };
        now: Date;
      },
    ): Promise<Transfer | null> {
      const { step, signature, then, now } = input;
      if ('nextDueAt' in then) {
        return applyMove(
          tx,
          transferId,
          { name: 'hopLanded', step, signature, nextDueAt: then.nextDueAt },
          now,
        );
      }
      const { recovery, shares } = then.settled;
      const transfer = await applyMove(tx, transferId, { name: 'settled', step, signature, recovery }, now);
      if (transfer) await accrueRewards(tx, transfer, shares, now);
      return transfer;
    },

    /** The keeper declared the route failed on chain after a permanent hop failure: status and phase `failed`. */
    markFailed: (tx: Sql, transferId: number, input: { lastError: Reason; recovery: Recovery; now: Date }) =>
      applyMove(
        tx,
        transferId,
        { name: 'failed', lastError: input.lastError, recovery: input.recovery },
        input.now,
      ),
  };
}

export type HopStore = ReturnType<typeof createHopStore>;
