import type { EventType, Recovery, RecoveryKind, Transfer } from '../domain/transfer.ts';
import type { Db, Sql } from './db.ts';
import { appendTransferEvents } from './events.ts';
import { recoveryRow, type TransferRow, toTransfer } from './transfer-rows.ts';

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
     * `failed` or `recoverable` transfer to phase `rescued`, status `refunded`, with events
     * `rescued`, `refunded` and `phase_changed` (once: a transfer rescued already only gains the
     * signatures). Answers the transfer as it is now.
     */
    async recordRescue(tx: Sql, transferId: number, outcome: RecoveryOutcome): Promise<Transfer> {
      const before = await lock(tx, transferId);
      const rescued = outcome.complete && (before.phase === 'failed' || before.phase === 'recoverable');
      const transfer = await update(tx, before, 'rescue', outcome, rescued ? 'rescued' : null);
      if (rescued) {
        await appendTransferEvents(
          tx,
          transfer,
          ['transfer.rescued', 'transfer.refunded', 'transfer.phase_changed'],
          outcome.now,
        );
      }
      return transfer;
    },

    /**
     * Records a verified reclaim: its signatures and the figures after it. A reclaim that leaves
     * nothing to reclaim and brought new signatures emits `rent_reclaimed`; a settled transfer then
     * moves to phase `reclaimed` (`phase_changed`), one rescued or reclaimed already keeps its
     * phase. Answers the transfer as it is now.
     */
    async recordReclaim(tx: Sql, transferId: number, outcome: RecoveryOutcome): Promise<Transfer> {
      const before = await lock(tx, transferId);
      const known = new Set(before.recovery_signatures.reclaim);
      const fresh = outcome.signatures.some((signature) => !known.has(signature));
      const reclaimed = outcome.complete && before.phase === 'settled';
      const transfer = await update(tx, before, 'reclaim', outcome, reclaimed ? 'reclaimed' : null);
      const events: EventType[] = [];
      if (outcome.complete && fresh) events.push('transfer.rent_reclaimed');
      if (reclaimed) events.push('transfer.phase_changed');
      await appendTransferEvents(tx, transfer, events, outcome.now);
      return transfer;
    },
  };
}

/** Adds a confirm's signatures of `kind` (once each), stores the figures and, when given, the new phase. */
async function update(
  tx: Sql,
  before: TransferRow,
  kind: RecoveryKind,
  outcome: RecoveryOutcome,
  phase: 'rescued' | 'reclaimed' | null,
): Promise<Transfer> {
  const signatures = {
    ...before.recovery_signatures,
    [kind]: [...new Set([...before.recovery_signatures[kind], ...outcome.signatures])],
  };
  const { rows } = await tx.query<TransferRow>(
    `UPDATE transfers
        SET recovery_signatures = $2::jsonb, recovery = $3::jsonb, phase = coalesce($4, phase),
            status = CASE WHEN $4 = 'rescued' THEN 'refunded' ELSE status END, updated_at = $5
      WHERE id = $1
      RETURNING *`,
    [
      before.id,
      JSON.stringify(signatures),
      JSON.stringify(recoveryRow(outcome.recovery)),
      phase,
      outcome.now,
    ],
  );
  return toTransfer(rows[0]!);
}

export type RecoveryStore = ReturnType<typeof createRecoveryStore>;
