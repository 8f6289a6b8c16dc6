import type { Owner } from '../../domain/integration.ts';
import type { EventType } from '../../domain/transfer.ts';
import { RETRY_WINDOW_MS } from '../../domain/webhook-retry.ts';
import { DELIVERY_CHANNEL } from '../channels.ts';
import type { Db, Sql } from '../db.ts';
import { readPage } from '../paging.ts';

/*
 * Events as the owner's tools see them: each with the state of its delivery to each of the owner's
 * endpoints, and sent again on request.
 */

/** Events are listed and can be resent for this long after they happened. */
export const EVENT_WINDOW_MS = 30 * 24 * 3600 * 1000;

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';
export type DeliveryTrigger = 'event' | 'resend';

/** The state of an event's delivery to one endpoint. */
export interface EventDelivery {
  endpointId: number;
  status: DeliveryStatus;
  trigger: DeliveryTrigger;
  attempts: number;
  nextAttemptAt: Date | null;
  lastAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
  completedAt: Date | null;
}

/** An event of the outbox with its deliveries to the owner's current endpoints. */
export interface ListedEvent {
  id: string;
  payload: Record<string, unknown>;
  deliveries: EventDelivery[];
  /** Reached at least one endpoint and nothing is pending or failed. */
  deliverySuccess: boolean;
}

export interface EventFilters {
  type?: EventType | undefined;
  transferId?: number | undefined;
  deliverySuccess?: boolean | undefined;
  /** Only events sent (or being sent) to this endpoint. */
  endpointId?: number | undefined;
}

/** Why a resend did not happen. */
export type ResendRefusal = 'event_not_found' | 'endpoint_not_found' | 'endpoint_disabled' | 'no_endpoint';

/** SQL that keeps only the deliveries to endpoints the owner still has. */
const LIVE_ENDPOINT = `JOIN webhook_endpoints endpoint ON endpoint.id = delivery.endpoint_id AND endpoint.deleted_at IS NULL`;
/** SQL true when an event reached at least one live endpoint and nothing is pending or failed. */
const DELIVERY_SUCCESS = `(EXISTS (SELECT 1 FROM webhook_deliveries delivery ${LIVE_ENDPOINT}
                                   WHERE delivery.event_id = event.id)
     AND NOT EXISTS (SELECT 1 FROM webhook_deliveries delivery ${LIVE_ENDPOINT}
                      WHERE delivery.event_id = event.id AND delivery.status <> 'succeeded'))`;

/**
 * A page of the owner's events of the last 30 days, newest first (within one moment, later
 * events of a transfer first), with their deliveries to the owner's current endpoints.
 */
export async function listEvents(
  db: Db,
  owner: Owner,
  filters: EventFilters,
  page: { limit: number; offset: number },
  now: Date,
): Promise<{ items: ListedEvent[]; total: number }> {
  const where = `event.integration_id = $1 AND event.mode = $2 AND event.created_at >= $3
    AND ($4::text IS NULL OR event.type = $4) AND ($5::bigint IS NULL OR event.transfer_id = $5)
    AND ($6::boolean IS NULL OR ${DELIVERY_SUCCESS} = $6)
    AND ($7::bigint IS NULL OR EXISTS (SELECT 1 FROM webhook_deliveries delivery
                                        WHERE delivery.event_id = event.id AND delivery.endpoint_id = $7))`;
  const params = [
    owner.integrationId,
    owner.mode,
    new Date(now.getTime() - EVENT_WINDOW_MS),
    filters.type ?? null,
    filters.transferId ?? null,
    filters.deliverySuccess ?? null,
    filters.endpointId ?? null,
  ];
  const { rows, total } = await readPage<{ id: string; payload: Record<string, unknown>; success: boolean }>(
    db,
    {
      select: `event.id, event.payload, ${DELIVERY_SUCCESS} AS success`,
      from: 'events event',
      where,
      orderBy:
        'event.created_at DESC, event.transfer_id DESC NULLS LAST, event.sequence DESC NULLS LAST, event.id DESC',
      params,
    },
    page,
  );
  const deliveries = await deliveriesOf(
    db,
    rows.map((row) => row.id),
  );
  return {
    items: rows.map((row) => ({
      id: row.id,
      payload: row.payload,
      deliveries: deliveries.get(row.id) ?? [],
      deliverySuccess: row.success,
    })),
    total,
  };
}

/** The deliveries of each of these events to the owner's current endpoints. */
async function deliveriesOf(db: Db, eventIds: string[]): Promise<Map<string, EventDelivery[]>> {
  const byEvent = new Map<string, EventDelivery[]>();
  if (eventIds.length === 0) return byEvent;
  const { rows } = await db.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries delivery ${LIVE_ENDPOINT}
      WHERE delivery.event_id = ANY ($1::text[]) ORDER BY delivery.endpoint_id`,
    [eventIds],
  );
  for (const row of rows) {
    const list = byEvent.get(row.event_id) ?? [];
    list.push(toEventDelivery(row));
    byEvent.set(row.event_id, list);
  }
  return byEvent;
}

/**
 * Queues an event of the last 30 days for delivery again, now: to one endpoint of the owner,
 * or to every active endpoint subscribed to its type. A delivery already in flight is left
 * to finish; any other starts a new round of attempts with a fresh retry window.
 */
export function resend(
  db: Db,
  owner: Owner,
  eventId: string,
  endpointId: number | undefined,
  now: Date,
): Promise<{ deliveries: EventDelivery[] } | { refused: ResendRefusal }> {
  return db.transaction(async (tx) => {
    const { rows: events } = await tx.query<ResentEvent>(
      `SELECT id, type, transfer_id, sequence FROM events
        WHERE id = $1 AND integration_id = $2 AND mode = $3 AND created_at >= $4`,
      [eventId, owner.integrationId, owner.mode, new Date(now.getTime() - EVENT_WINDOW_MS)],
    );
    const event = events[0];
    if (!event) return { refused: 'event_not_found' as const };
    const { rows: endpoints } = await tx.query<{ id: string; is_active: boolean }>(
      `SELECT id, is_active FROM webhook_endpoints
        WHERE integration_id = $1 AND mode = $2 AND deleted_at IS NULL
          AND ($3::bigint IS NULL OR id = $3)
          AND ($3::bigint IS NOT NULL OR (is_active AND (events IS NULL OR $4 = ANY (events))))
        ORDER BY id`,
      [owner.integrationId, owner.mode, endpointId ?? null, event.type],
    );
    if (endpoints.length === 0) {
      return {
        refused: endpointId === undefined ? ('no_endpoint' as const) : ('endpoint_not_found' as const),
      };
    }
    if (endpoints.some((endpoint) => !endpoint.is_active)) return { refused: 'endpoint_disabled' as const };
    return {
      deliveries: await requeue(
        tx,
        event,
        endpoints.map((endpoint) => endpoint.id),
        now,
      ),
    };
  });
}

type ResentEvent = { id: string; type: string; transfer_id: string | null; sequence: number | null };

/** Starts a new round of the event's deliveries to these endpoints (see {@link resend}) and wakes the workers. */
async function requeue(
  tx: Sql,
  event: ResentEvent,
  endpointIds: string[],
  now: Date,
): Promise<EventDelivery[]> {
  await tx.query(
    `INSERT INTO webhook_deliveries AS delivery (event_id, endpoint_id, transfer_id, sequence, trigger,
                                                  next_attempt_at, retry_until, created_at)
     SELECT $1, endpoint_id, $2, $3, 'resend', $4, $5, $4 FROM unnest($6::bigint[]) AS target(endpoint_id)
     ON CONFLICT (event_id, endpoint_id) DO UPDATE
        SET status = 'pending', trigger = 'resend', attempts = 0, next_attempt_at = $4, retry_until = $5,
            lease_token = NULL, claimed_by = NULL, completed_at = NULL
      WHERE NOT (delivery.status = 'pending' AND delivery.lease_token IS NOT NULL
                 AND delivery.claimed_by IN (SELECT id FROM live_workers))`,
    [
      event.id,
      event.transfer_id,
      event.sequence,
      now,
      new Date(now.getTime() + RETRY_WINDOW_MS),
      endpointIds,
    ],
  );
  await tx.query('SELECT pg_notify($1, $2)', [DELIVERY_CHANNEL, '']);
  const { rows } = await tx.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries delivery
      WHERE delivery.event_id = $1 AND delivery.endpoint_id = ANY ($2::bigint[]) ORDER BY delivery.endpoint_id`,
    [event.id, endpointIds],
  );
  return rows.map(toEventDelivery);
}

const DELIVERY_COLUMNS = `delivery.event_id, delivery.endpoint_id, delivery.status, delivery.trigger, delivery.attempts,
  delivery.next_attempt_at, delivery.last_attempt_at, delivery.last_status_code, delivery.last_error,
  delivery.completed_at`;

type DeliveryRow = {
  event_id: string;
  endpoint_id: string;
  status: DeliveryStatus;
  trigger: DeliveryTrigger;
  attempts: number;
  next_attempt_at: Date;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  completed_at: Date | null;
};

function toEventDelivery(row: DeliveryRow): EventDelivery {
  return {
    endpointId: Number(row.endpoint_id),
    status: row.status,
    trigger: row.trigger,
    attempts: row.attempts,
    nextAttemptAt: row.status === 'pending' ? row.next_attempt_at : null,
    lastAttemptAt: row.last_attempt_at,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    completedAt: row.completed_at,
  };
}
