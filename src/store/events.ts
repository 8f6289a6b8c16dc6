import { newEventId, transferEventPayload } from '../domain/events.ts';
import type { EventType, Transfer } from '../domain/transfer.ts';
import { RETRY_WINDOW_MS } from '../domain/webhook-retry.ts';
import type { Sql } from './db.ts';
import { DELIVERY_CHANNEL } from './deliveries.ts';

/**
 * Appends events about a transfer to the outbox, inside the caller's transaction, so the change
 * and its events commit together or not at all. Sequence numbers come from a counter on the
 * transfer row, which the caller's change has already locked. In the same statement each event
 * gets a pending delivery to every active endpoint of the owner subscribed to its type, and
 * delivery workers are notified (NOTIFY is sent on commit, so they never see uncommitted rows).
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
  const last = rows[0]!.event_sequence;
  const first = last - types.length + 1;
  const ids: string[] = [];
  const sequences: number[] = [];
  const typeList: string[] = [];
  const payloads: string[] = [];
  types.forEach((type, index) => {
    const id = newEventId();
    const sequence = first + index;
    ids.push(id);
    sequences.push(sequence);
    typeList.push(type);
    payloads.push(JSON.stringify(transferEventPayload({ id, type, transfer, sequence, createdAt: now })));
  });
  await tx.query(
    `WITH appended AS (
       INSERT INTO events (id, integration_id, mode, type, transfer_id, sequence, payload, created_at)
       SELECT id, $1, $2, type, $3, sequence, payload::jsonb, $4
         FROM unnest($5::text[], $6::text[], $7::int[], $8::text[]) AS e(id, type, sequence, payload)
       RETURNING id, type, sequence
     ), fanned_out AS (
       INSERT INTO webhook_deliveries (event_id, endpoint_id, transfer_id, sequence, next_attempt_at, retry_until, created_at)
       SELECT appended.id, endpoint.id, $3, appended.sequence, $4, $9, $4
         FROM appended
         JOIN webhook_endpoints endpoint
           ON endpoint.integration_id = $1 AND endpoint.mode = $2 AND endpoint.is_active
          AND endpoint.deleted_at IS NULL
          AND (endpoint.events IS NULL OR appended.type = ANY (endpoint.events))
       RETURNING 1
     )
     SELECT pg_notify($10, '') FROM (SELECT 1 FROM fanned_out LIMIT 1) AS any_delivery`,
    [
      transfer.integrationId,
      transfer.mode,
      transfer.id,
      now,
      ids,
      typeList,
      sequences,
      payloads,
      new Date(now.getTime() + RETRY_WINDOW_MS),
      DELIVERY_CHANNEL,
    ],
  );
}
