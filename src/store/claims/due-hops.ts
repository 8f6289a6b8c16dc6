import type { Transfer } from '../../domain/transfer.ts';
import type { Db } from '../db.ts';
import { openKeeperKey } from '../keeper-keys.ts';
import type { SecretBox } from '../secret-box.ts';
import { type TransferRow, toTransfer } from '../transfer-rows.ts';

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

/** What a claim of due routes takes: the chain's time, this process's, the claiming worker and how many at most. */
export interface DueHopsClaim {
  chainNow: bigint;
  now: Date;
  /** The claiming worker process (src/store/worker-processes.ts). */
  worker: string;
  limit: number;
}

/**
 * The keeper's claim (src/workers/keeper.ts, through the hop store's `claimDue`): up to `limit`
 * routes taken over (status `processing`) whose keeper work is due at the chain's time `chainNow`,
 * oldest due first, that no live worker holds and no backoff delays. Each gets a new claim token
 * and names its `worker`: the worker gives the route back (`release`) or records its hop, and the
 * route is free again seconds after a worker that holds it dies (`live_workers`); every later
 * write of a worker names its token, so one whose claim was taken over changes nothing.
 */
export async function claimDueHops(db: Db, secrets: SecretBox, input: DueHopsClaim): Promise<ClaimedRoute[]> {
  const { rows } = await db.query<ClaimRow>(
    `UPDATE transfers SET keeper_claim = gen_random_uuid(), keeper_claimed_by = $3
      WHERE id IN (SELECT id FROM transfers
                    WHERE status = 'processing' AND keeper_due_at <= $1
                      AND (keeper_claimed_by IS NULL OR keeper_claimed_by NOT IN (SELECT id FROM live_workers))
                      AND (keeper_retry_at IS NULL OR keeper_retry_at <= $2)
                    ORDER BY keeper_due_at LIMIT $4 FOR UPDATE SKIP LOCKED)
      RETURNING *`,
    [input.chainNow.toString(), input.now, input.worker, input.limit],
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
}
