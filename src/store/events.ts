import { newEventId, transferEventPayload } from '../domain/events.ts';
import type { EventType, Transfer } from '../domain/transfer.ts';
import { RETRY_WINDOW_MS } from '../domain/webhook-retry.ts';
import type { Sql } from './db.ts';
import { DELIVERY_CHANNEL } from './deliveries.ts';

/**
 * The outbox statement's tail: the events, a pending delivery for each to every active endpoint of
 * the owner subscribed to its type, and a NOTIFY so delivery workers wake (sent on commit, so they
 * never see uncommitted rows). Its ten parameters start at `$first`.
 */
export function outboxSql(first: number) {
  const p = (n: number) => `$${first + n}`;
  return {
    ctes: `appended AS (
       INSERT INTO events (id, integration_id, mode, type, transfer_id, sequence, payload, created_at)
       SELECT id, ${p(0)}, ${p(1)}, type, ${p(2)}, sequence, payload::json, ${p(3)}
         FROM unnest(${p(4)}::text[], ${p(5)}::text[], ${p(6)}::int[], ${p(7)}::text[]) AS e(id, type, sequence, payload)
       RETURNING id, type, sequence
     ), fanned_out AS (
       INSERT INTO webhook_deliveries (event_id, endpoint_id, transfer_id, sequence, next_attempt_at, retry_until, created_at)
       SELECT appended.id, endpoint.id, ${p(2)}, appended.sequence, ${p(3)}, ${p(8)}, ${p(3)}
         FROM appended
         JOIN webhook_endpoints endpoint
           ON endpoint.integration_id = ${p(0)} AND endpoint.mode = ${p(1)} AND endpoint.is_active
          AND endpoint.deleted_at IS NULL
          AND (endpoint.events IS NULL OR appended.type = ANY (endpoint.events))
       RETURNING 1
     )`,
    select: `SELECT pg_notify(${p(9)}, '') FROM (SELECT 1 FROM fanned_out LIMIT 1) AS any_delivery`,
  };
}

/** The parameters of {@link outboxSql}: events `types` of `transfer`, numbered from `firstSequence`. */
export function outboxParams(
  transfer: Transfer,
  types: readonly EventType[],
  firstSequence: number,
  now: Date,
) {
  const ids: string[] = [];
  const sequences: number[] = [];
  const payloads: string[] = [];
  types.forEach((type, index) => {
    const id = newEventId();
    const sequence = firstSequence + index;
    ids.push(id);
    sequences.push(sequence);
    payloads.push(JSON.stringify(transferEventPayload({ id, type, transfer, sequence, createdAt: now })));
  });
  return [
    transfer.integrationId,
    transfer.mode,
    transfer.id,
    now,
    ids,
    [...types],
    sequences,
    payloads,
    new Date(now.getTime() + RETRY_WINDOW_MS),
    DELIVERY_CHANNEL,
  ];
}

/**
 * Appends events about a transfer to the outbox, inside the caller's transaction, so the change
 * and its events commit together or not at all. Sequence numbers come from a counter on the
 * transfer row, which the caller's change has already locked. The events are stored as the exact
 * JSON text that is delivered.
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
  const first = rows[0]!.event_sequence - types.length + 1;
  const outbox = outboxSql(1);
  await tx.query(`WITH ${outbox.ctes} ${outbox.select}`, outboxParams(transfer, types, first, now));
}
