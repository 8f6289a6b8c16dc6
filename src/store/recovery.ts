import type { Recovery, RecoveryKind, Transfer } from '../domain/transfer.ts';
import type { Db, Sql } from './db.ts';
import { recoveryRow, type TransferRow, toTransfer } from './transfer-rows.ts';
import { applyMove } from './transitions.ts';

/** The latest rescue or reclaim bundle handed out for a transfer. */
export interface StoredRecoveryBundle {
  /** Base64 wire transactions in broadcast order. */
  transactions: string[];
  preparedAt: Date;
}

/** What a verified recovery confirm records. */
export interface RecoveryOutcome {
  /** Signatures verified on chain; those recorded before are not counted again. */
  signatures: readonly string[];
  /** The figures read on chain after them. */
  recovery: Recovery;
  /** Nothing of this kind is left on chain: the rescue or the reclaim is complete. */
  complete: boolean;
  now: Date;
}

/**
 * The recovery side of a transfer: the bundles handed out (a confirm is checked against the latest
 * one), the recovery figures read on chain, and the end of a rescue or a reclaim with its events.
 */
export function createRecoveryStore(db: Db) {
  async function lock(tx: Sql, transferId: number): Promise<TransferRow> {
    const { rows } = await tx.query<TransferRow>('SELECT * FROM transfers WHERE id = $1 FOR UPDATE', [
      transferId,
    ]);
    if (!rows[0]) throw new Error(`transfer ${transferId} does not exist`);
    return rows[0];
  }

  return {
    /**
     * Keeps the bundle just built as the transfer's latest of its kind (an earlier one becomes
     * stale) and the figures it was built from.
     */
    async saveBundle(
      tx: Sql,
      transferId: number,
      input: { kind: RecoveryKind; transactions: readonly string[]; recovery: Recovery; now: Date },
    ): Promise<void> {
      await tx.query(
        `INSERT INTO recovery_bundles (transfer_id, kind, transactions, prepared_at)
         VALUES ($1, $2, $3::jsonb, $4)
         ON CONFLICT (transfer_id, kind) DO UPDATE SET transactions = excluded.transactions,
                                                       prepared_at = excluded.prepared_at`,
        [transferId, input.kind, JSON.stringify(input.transactions), input.now],
      );
      await tx.query('UPDATE transfers SET recovery = $2::jsonb, updated_at = $3 WHERE id = $1', [
        transferId,
        JSON.stringify(recoveryRow(input.recovery)),
        input.now,
      ]);
    },

    /** The latest bundle of `kind` handed out for a transfer, or null when none was. */
    async latestBundle(transferId: number, kind: RecoveryKind): Promise<StoredRecoveryBundle | null> {
      const { rows } = await db.query<{ transactions: string[]; prepared_at: Date }>(
        'SELECT transactions, prepared_at FROM recovery_bundles WHERE transfer_id = $1 AND kind = $2',
        [transferId, kind],
      );
      return rows[0] ? { transactions: rows[0].transactions, preparedAt: rows[0].prepared_at } : null;
    },

    /**
     * Records a verified rescue: its signatures and the figures after it. A complete rescue moves a
     * `failed` or `recoverable` transfer to phase `rescued` (once: a transfer rescued already only
     * gains the signatures). Answers the transfer as it is now.
     */
    async recordRescue(tx: Sql, transferId: number, outcome: RecoveryOutcome): Promise<Transfer> {
      const before = await lock(tx, transferId);
      const recorded = await record(tx, before, 'rescue', outcome);
      if (!outcome.complete) return recorded;
      return (await applyMove(tx, transferId, { name: 'rescued' }, outcome.now)) ?? recorded;
    },

    /**
     * Records a verified reclaim: its signatures and the figures after it. A complete reclaim moves
     * a settled transfer to phase `reclaimed`; on one rescued or reclaimed already, a complete
     * reclaim that brought new signatures only says so (`rent_reclaimed`). Answers the transfer as
     * it is now.
     */
    async recordReclaim(tx: Sql, transferId: number, outcome: RecoveryOutcome): Promise<Transfer> {
      const before = await lock(tx, transferId);
      const known = new Set(before.recovery_signatures.reclaim);
      const fresh = outcome.signatures.some((signature) => !known.has(signature));
      const recorded = await record(tx, before, 'reclaim', outcome);
      if (!outcome.complete) return recorded;
      const move = before.phase === 'settled' ? 'reclaimed' : fresh ? 'reclaimedAgain' : null;
      return (move && (await applyMove(tx, transferId, { name: move }, outcome.now))) ?? recorded;
    },
  };
}

/** Adds a confirm's signatures of `kind` (once each) and stores the figures read after it. */
async function record(tx: Sql, before: TransferRow, kind: RecoveryKind, outcome: RecoveryOutcome) {
  const signatures = {
    ...before.recovery_signatures,
    [kind]: [...new Set([...before.recovery_signatures[kind], ...outcome.signatures])],
  };
  const { rows } = await tx.query<TransferRow>(
    `UPDATE transfers SET recovery_signatures = $2::jsonb, recovery = $3::jsonb, updated_at = $4
      WHERE id = $1
      RETURNING *`,
    [before.id, JSON.stringify(signatures), JSON.stringify(recoveryRow(outcome.recovery)), outcome.now],
  );
  return toTransfer(rows[0]!);
}

export type RecoveryStore = ReturnType<typeof createRecoveryStore>;
