import { newEventId, transferEventPayload } from '../domain/events.ts';
import type { EventType, Transfer } from '../domain/transfer.ts';
import { RETRY_WINDOW_MS } from '../domain/webhook-retry.ts';
import { DELIVERY_CHANNEL } from './channels.ts';
import type { Sql } from './db.ts';

/**
 * Stores one event and queues a delivery of it to every active endpoint of its owner subscribed to
 * its type. Answers the number of deliveries queued.
 */
const APPEND_EVENT_SQL = `
  WITH event AS (
    INSERT INTO events (id, integration_id, mode, type, transfer_id, sequence, payload, created_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7::json, $8)
    RETURNING id, integration_id, mode, type, transfer_id, sequence, created_at
  )
  INSERT INTO webhook_deliveries (event_id, endpoint_id, transfer_id, sequence, next_attempt_at, retry_until, created_at)
  SELECT event.id, endpoint.id, event.transfer_id, event.sequence, event.created_at,
         event.created_at + $9 * interval '1 millisecond', event.created_at
    FROM event
    JOIN webhook_endpoints endpoint
      ON endpoint.integration_id = event.integration_id AND endpoint.mode = event.mode
     AND endpoint.is_active AND endpoint.deleted_at IS NULL
     AND (endpoint.events IS NULL OR event.type = ANY (endpoint.events))`;

/**
 * Appends events about a transfer to the outbox, inside the caller's transaction, so the change
 * and its events commit together or not at all. Each event carries the transfer as it is after the
 * change and the next number of the transfer's own sequence (a counter on its row, which this
 * locks until commit, so concurrent changes of one transfer number their events in commit order).
 * Delivery workers are notified on commit.
 */
export async function appendTransferEvents(
  tx: Sql,
  transfer: Transfer,
  types: readonly EventType[],
  now: Date,
): Promise<void> {
  if (types.length === 0) return;
  const { rows } = await tx.query<{ event_sequence: number }>(
    'UPDATE transfers SET event_sequence = event_sequence + $2 WHERE id = $1 RETURNING event_sequence',
    [transfer.id, types.length],
  );
  const firstSequence = rows[0]!.event_sequence - types.length + 1;
  let deliveries = 0;
  for (const [index, type] of types.entries()) {
    const id = newEventId();
    const sequence = firstSequence + index;
    const payload = JSON.stringify(transferEventPayload({ id, type, transfer, sequence, createdAt: now }));
    const { rowCount } = await tx.query(APPEND_EVENT_SQL, [
      id,
      transfer.integrationId,
      transfer.mode,
      type,
      transfer.id,
      sequence,
      payload,
      now,
      RETRY_WINDOW_MS,
    ]);
    deliveries += rowCount;
  }
  if (deliveries > 0) await tx.query('SELECT pg_notify($1, $2)', [DELIVERY_CHANNEL, '']);
}
