import { newEventId, transferEventPayload } from '../domain/events.ts';
import type { EventType, Transfer } from '../domain/transfer.ts';
import { RETRY_WINDOW_MS } from '../domain/webhook-retry.ts';
import type { Sql } from './db.ts';
import { DELIVERY_CHANNEL } from './deliveries.ts';

/** Events about one transfer, numbered from `firstSequence`, all created at `now`. */
export interface TransferEvents {
  transfer: Transfer;
  types: readonly EventType[];
  firstSequence: number;
  now: Date;
}

/**
 * The outbox statement's tail: the events (of any number of transfers), a pending delivery for
 * each to every active endpoint of its owner subscribed to its type, and a NOTIFY so delivery
 * workers wake (sent on commit, so they never see uncommitted rows). Its ten parameters start at
 * `$first`; {@link outboxParams} builds them.
 */
export function outboxSql(first: number) {
  const p = (n: number) => `$${first + n}`;
  return {
    ctes: `appended AS (
       INSERT INTO events (id, integration_id, mode, type, transfer_id, sequence, payload, created_at)
       SELECT id, integration_id, mode, type, transfer_id, sequence, payload::json, created_at
         FROM unnest(${p(0)}::text[], ${p(1)}::bigint[], ${p(2)}::text[], ${p(3)}::text[], ${p(4)}::bigint[],
                     ${p(5)}::int[], ${p(6)}::text[], ${p(7)}::timestamptz[])
              AS e(id, integration_id, mode, type, transfer_id, sequence, payload, created_at)
       RETURNING id, integration_id, mode, type, transfer_id, sequence, created_at
     ), fanned_out AS (
       INSERT INTO webhook_deliveries (event_id, endpoint_id, transfer_id, sequence, next_attempt_at, retry_until, created_at)
       SELECT appended.id, endpoint.id, appended.transfer_id, appended.sequence, appended.created_at,
              appended.created_at + ${p(8)} * interval '1 millisecond', appended.created_at
         FROM appended
         JOIN webhook_endpoints endpoint
           ON endpoint.integration_id = appended.integration_id AND endpoint.mode = appended.mode
          AND endpoint.is_active AND endpoint.deleted_at IS NULL
          AND (endpoint.events IS NULL OR appended.type = ANY (endpoint.events))
       RETURNING 1
     )`,
    select: `SELECT pg_notify(${p(9)}, '') FROM (SELECT 1 FROM fanned_out LIMIT 1) AS any_delivery`,
  };
}

/** The parameters of {@link outboxSql}. Payloads are the exact JSON text that is delivered. */
export function outboxParams(batches: readonly TransferEvents[]) {
  const columns = {
    id: [] as string[],
    integrationId: [] as number[],
    mode: [] as string[],
    type: [] as string[],
    transferId: [] as number[],
    sequence: [] as number[],
    payload: [] as string[],
    createdAt: [] as Date[],
  };
  for (const { transfer, types, firstSequence, now } of batches) {
    types.forEach((type, index) => {
      const id = newEventId();
      const sequence = firstSequence + index;
      columns.id.push(id);
      columns.integrationId.push(transfer.integrationId);
      columns.mode.push(transfer.mode);
      columns.type.push(type);
      columns.transferId.push(transfer.id);
      columns.sequence.push(sequence);
      columns.payload.push(
        JSON.stringify(transferEventPayload({ id, type, transfer, sequence, createdAt: now })),
      );
      columns.createdAt.push(now);
    });
  }
  return [...Object.values(columns), RETRY_WINDOW_MS, DELIVERY_CHANNEL];
}

/**
 * Appends events about a transfer to the outbox, inside the caller's transaction, so the change
 * and its events commit together or not at all. Sequence numbers come from a counter on the
 * transfer row, which the caller's change has already locked.
 */
export async function appendTransferEvents(
  tx: Sql,
  transfer: Transfer,
  types: readonly EventType[],
  now: Date,
) {
  if (types.length === 0) return;
  const { rows } = await tx.query<{ event_sequence: number }>(
    'UPDATE transfers SET event_sequence = event_sequence + $2 WHERE id = $1 RETURNING event_sequence',
    [transfer.id, types.length],
  );
  const firstSequence = rows[0]!.event_sequence - types.length + 1;
  const outbox = outboxSql(1);
  await tx.query(
    `WITH ${outbox.ctes} ${outbox.select}`,
    outboxParams([{ transfer, types, firstSequence, now }]),
  );
}
