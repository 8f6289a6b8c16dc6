import type { Owner } from '../domain/integration.ts';
import type { EventType } from '../domain/transfer.ts';
import { RETRY_WINDOW_MS } from '../domain/webhook-retry.ts';
import { DELIVERY_CHANNEL } from './channels.ts';
import type { Db } from './db.ts';
import { readPage } from './paging.ts';
import type { SecretBox } from './secret-box.ts';

/** Events are listed and can be resent for this long after they happened. */
export const EVENT_WINDOW_MS = 30 * 24 * 3600 * 1000;

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';
export type DeliveryTrigger = 'event' | 'resend';
export type AttemptTrigger = DeliveryTrigger | 'test';

/** A delivery a worker has claimed: everything needed to sign and send it, and to report back. */
export interface ClaimedDelivery {
  id: number;
  leaseToken: string;
  endpointId: number;
  url: string;
  /** Signing secrets: the current one, then the previous one while its rotation overlap lasts. */
  secrets: string[];
  eventId: string;
  eventType: string;
  /** The event JSON, byte for byte what is POSTed and signed. */
  body: string;
  trigger: DeliveryTrigger;
  /** This attempt's number in the current round (1 = first). */
  attempt: number;
  retryUntil: Date;
}

/** One HTTP attempt, as logged. */
export interface AttemptRecord {
  endpointId: number;
  eventId: string;
  eventType: string;
  trigger: AttemptTrigger;
  attempt: number;
  attemptedAt: Date;
  succeeded: boolean;
  /** Null when no HTTP response came; `error` says why. */
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

/** A claimed delivery's attempt and what follows from it. */
export interface DeliveryResult extends AttemptRecord {
  deliveryId: number;
  leaseToken: string;
  outcome: { kind: 'succeeded' } | { kind: 'retry'; at: Date } | { kind: 'failed' };
}

/** A logged attempt as the API lists it. */
export interface LoggedAttempt extends AttemptRecord {
  id: number;
}

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
}

/** Why a resend did not happen. */
export type ResendRefusal = 'event_not_found' | 'endpoint_not_found' | 'endpoint_disabled' | 'no_endpoint';

/** Where and how to send to an endpoint now: its URL and signing secrets. */
export interface SendingTarget {
  endpointId: number;
  url: string;
  secrets: string[];
}

type ClaimRow = {
  id: string;
  lease_token: string;
  endpoint_id: string;
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  event_id: string;
  event_type: string;
  body: string;
  trigger: DeliveryTrigger;
  attempts: number;
  retry_until: Date;
};

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

type AttemptRow = {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  trigger: AttemptTrigger;
  attempt: number;
  attempted_at: Date;
  succeeded: boolean;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
};

const toEventDelivery = (row: DeliveryRow): EventDelivery => ({
  endpointId: Number(row.endpoint_id),
  status: row.status,
  trigger: row.trigger,
  attempts: row.attempts,
  nextAttemptAt: row.status === 'pending' ? row.next_attempt_at : null,
  lastAttemptAt: row.last_attempt_at,
  lastStatusCode: row.last_status_code,
  lastError: row.last_error,
  completedAt: row.completed_at,
});

const toLoggedAttempt = (row: AttemptRow): LoggedAttempt => ({
  id: Number(row.id),
  endpointId: Number(row.endpoint_id),
  eventId: row.event_id,
  eventType: row.event_type,
  trigger: row.trigger,
  attempt: row.attempt,
  attemptedAt: row.attempted_at,
  succeeded: row.succeeded,
  statusCode: row.status_code,
  durationMs: row.duration_ms,
  error: row.error,
});

/**
 * Claims due deliveries for one worker. Endpoints with free slots are taken first, each locked
 * with SKIP LOCKED so that two workers do not fill one endpoint's slots at once (the per-endpoint
 * cap holds across workers, give or take a claim racing another's commit, since the count is read
 * from the statement's snapshot); then, per endpoint, up to its free slots of due deliveries, oldest due first,
 * skipping any whose transfer has an earlier event still pending to that endpoint. A claim sets a
 * lease: `next_attempt_at` becomes the lease expiry, so a delivery whose worker died is due again
 * when the lease lapses, and the result is only recorded with the claim's `lease_token`.
 * An endpoint that is failing gets one request at a time until it answers again.
 */
const CLAIM_SQL = `
WITH candidate AS (
  SELECT endpoint.id, endpoint.url, endpoint.secret_sealed, endpoint.previous_secret_sealed,
         endpoint.previous_secret_expires_at, slots.free AS free_slots
    FROM webhook_endpoints endpoint
   CROSS JOIN LATERAL (
     SELECT CASE WHEN endpoint.failing_since IS NULL THEN $3::int ELSE $4::int END
              - (SELECT count(*)::int FROM webhook_deliveries busy
                  WHERE busy.endpoint_id = endpoint.id AND busy.status = 'pending'
                    AND busy.lease_token IS NOT NULL AND busy.next_attempt_at > $1) AS free
   ) AS slots
   WHERE endpoint.is_active AND endpoint.deleted_at IS NULL
     -- Endpoints at their cap are left out, so busy endpoints never crowd out the others.
     AND slots.free > 0
     AND EXISTS (SELECT 1 FROM webhook_deliveries due
                  WHERE due.endpoint_id = endpoint.id AND due.status = 'pending' AND due.next_attempt_at <= $1)
   ORDER BY (SELECT min(due.next_attempt_at) FROM webhook_deliveries due
              WHERE due.endpoint_id = endpoint.id AND due.status = 'pending'), endpoint.id
   LIMIT $5
   FOR NO KEY UPDATE OF endpoint SKIP LOCKED
), picked AS (
  SELECT delivery.id
    FROM candidate
   CROSS JOIN LATERAL (
     SELECT due.id FROM webhook_deliveries due
      WHERE due.endpoint_id = candidate.id AND due.status = 'pending' AND due.next_attempt_at <= $1
        -- OFFSET 0 keeps this a per-row probe of the ordering index; as an anti-join the planner
        -- may scan every pending delivery of the endpoint instead.
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries earlier
                         WHERE earlier.endpoint_id = due.endpoint_id AND earlier.transfer_id = due.transfer_id
                           AND earlier.sequence < due.sequence AND earlier.status = 'pending'
                           AND earlier.transfer_id IS NOT NULL
                        OFFSET 0)
      ORDER BY due.next_attempt_at, due.id
      LIMIT candidate.free_slots
      FOR UPDATE SKIP LOCKED
   ) AS delivery
   LIMIT $6
), claimed AS (
  UPDATE webhook_deliveries delivery
     SET attempts = delivery.attempts + 1, lease_token = gen_random_uuid(), next_attempt_at = $2
    FROM picked WHERE delivery.id = picked.id
  RETURNING delivery.id, delivery.endpoint_id, delivery.event_id, delivery.lease_token, delivery.trigger,
            delivery.attempts, delivery.retry_until
)
SELECT claimed.id, claimed.lease_token, claimed.endpoint_id, claimed.event_id, claimed.trigger, claimed.attempts,
       claimed.retry_until, candidate.url, candidate.secret_sealed, candidate.previous_secret_sealed,
       candidate.previous_secret_expires_at, event.type AS event_type, event.payload::text AS body
  FROM claimed
  JOIN candidate ON candidate.id = claimed.endpoint_id
  JOIN events event ON event.id = claimed.event_id
 ORDER BY claimed.endpoint_id, claimed.id`;

/**
 * Records a batch of attempts in one statement: the log rows, each delivery's new state (only
 * while the recording worker still holds its lease), and each endpoint's failure tracking. An
 * endpoint is disabled when a delivery to it gave up and it has had no success for the whole
 * retry window. Returns the endpoints disabled.
 */
const RECORD_SQL = `
WITH result AS (
  SELECT * FROM unnest($1::bigint[], $2::uuid[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::int[],
                       $8::timestamptz[], $9::boolean[], $10::int[], $11::real[], $12::text[], $13::text[],
                       $14::timestamptz[])
    AS r(delivery_id, lease_token, endpoint_id, event_id, event_type, trigger, attempt, attempted_at, succeeded,
         status_code, duration_ms, error, outcome, next_attempt_at)
), updated AS (
  UPDATE webhook_deliveries delivery
     SET status = CASE result.outcome WHEN 'retry' THEN 'pending' ELSE result.outcome END,
         next_attempt_at = coalesce(result.next_attempt_at, delivery.next_attempt_at),
         lease_token = NULL,
         last_attempt_at = result.attempted_at,
         last_status_code = result.status_code,
         last_error = result.error,
         completed_at = CASE WHEN result.outcome = 'retry' THEN NULL ELSE result.attempted_at END
    FROM result
   WHERE delivery.id = result.delivery_id AND delivery.lease_token = result.lease_token
  RETURNING delivery.id
), logged AS (
  INSERT INTO webhook_delivery_attempts (endpoint_id, delivery_id, event_id, event_type, trigger, attempt,
                                         attempted_at, succeeded, status_code, duration_ms, error)
  SELECT endpoint_id, delivery_id, event_id, event_type, trigger, attempt, attempted_at, succeeded, status_code,
         duration_ms, error
    FROM result
   -- A delivery deleted meanwhile (its endpoint or event is gone) has nothing left to log against.
   WHERE EXISTS (SELECT 1 FROM webhook_deliveries delivery WHERE delivery.id = result.delivery_id)
), per_endpoint AS (
  SELECT endpoint_id,
         bool_or(succeeded) AS any_success,
         min(attempted_at) FILTER (WHERE NOT succeeded) AS first_failure,
         max(attempted_at) AS last_attempt,
         bool_or(outcome = 'failed' AND delivery_id IN (SELECT id FROM updated)) AS gave_up
    FROM result GROUP BY endpoint_id
), changed AS (
  SELECT endpoint.id,
         CASE WHEN per_endpoint.any_success THEN NULL
              ELSE coalesce(endpoint.failing_since, per_endpoint.first_failure) END AS failing_since,
         endpoint.is_active AND NOT per_endpoint.any_success AND per_endpoint.gave_up
           AND coalesce(endpoint.failing_since, per_endpoint.first_failure)
               <= per_endpoint.last_attempt - make_interval(secs => $15::double precision / 1000) AS disable,
         per_endpoint.last_attempt
    FROM webhook_endpoints endpoint JOIN per_endpoint ON per_endpoint.endpoint_id = endpoint.id
)
UPDATE webhook_endpoints endpoint
   SET failing_since = changed.failing_since,
       is_active = endpoint.is_active AND NOT changed.disable,
       disabled_at = CASE WHEN changed.disable THEN changed.last_attempt ELSE endpoint.disabled_at END
  FROM changed
 WHERE endpoint.id = changed.id
   AND (changed.disable OR endpoint.failing_since IS DISTINCT FROM changed.failing_since)
RETURNING endpoint.id, changed.disable`;

const DELIVERY_COLUMNS = `delivery.event_id, delivery.endpoint_id, delivery.status, delivery.trigger, delivery.attempts,
  delivery.next_attempt_at, delivery.last_attempt_at, delivery.last_status_code, delivery.last_error,
  delivery.completed_at`;

/** Deliveries of events to webhook endpoints: claiming, recording attempts, and the tools' queries. */
export function createDeliveryStore(db: Db, secrets: SecretBox) {
  // Opening a sealed secret is cheap but not free; a worker signs many deliveries per endpoint.
  const opened = new Map<string, string>();
  const open = (sealed: string) => {
    let secret = opened.get(sealed);
    if (secret === undefined) {
      if (opened.size >= 10_000) opened.clear();
      secret = secrets.open(sealed);
      opened.set(sealed, secret);
    }
    return secret;
  };
  const signingSecrets = (
    row: {
      secret_sealed: string;
      previous_secret_sealed: string | null;
      previous_secret_expires_at: Date | null;
    },
    now: Date,
  ) => {
    const list = [open(row.secret_sealed)];
    if (
      row.previous_secret_sealed &&
      row.previous_secret_expires_at &&
      row.previous_secret_expires_at > now
    ) {
      list.push(open(row.previous_secret_sealed));
    }
    return list;
  };

  /** SQL that keeps only the deliveries to endpoints the owner still has. */
  const liveEndpoint = `JOIN webhook_endpoints endpoint ON endpoint.id = delivery.endpoint_id AND endpoint.deleted_at IS NULL`;
  const successExpression = `(EXISTS (SELECT 1 FROM webhook_deliveries delivery ${liveEndpoint}
                                       WHERE delivery.event_id = event.id)
     AND NOT EXISTS (SELECT 1 FROM webhook_deliveries delivery ${liveEndpoint}
                      WHERE delivery.event_id = event.id AND delivery.status <> 'succeeded'))`;

  async function deliveriesOf(eventIds: string[]): Promise<Map<string, EventDelivery[]>> {
    const byEvent = new Map<string, EventDelivery[]>();
    if (eventIds.length === 0) return byEvent;
    const { rows } = await db.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries delivery ${liveEndpoint}
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

  return {
    /**
     * Claims up to `limit` due deliveries, at most `perEndpoint` in flight per endpoint across all
     * workers (`perFailingEndpoint` while it is failing), leased until `now + leaseMs`.
     */
    async claim(input: {
      now: Date;
      leaseMs: number;
      limit: number;
      perEndpoint: number;
      perFailingEndpoint: number;
      maxEndpoints: number;
    }): Promise<ClaimedDelivery[]> {
      const { rows } = await db.query<ClaimRow>(CLAIM_SQL, [
        input.now,
        new Date(input.now.getTime() + input.leaseMs),
        input.perEndpoint,
        input.perFailingEndpoint,
        input.maxEndpoints,
        input.limit,
      ]);
      return rows.map((row) => ({
        id: Number(row.id),
        leaseToken: row.lease_token,
        endpointId: Number(row.endpoint_id),
        url: row.url,
        secrets: signingSecrets(row, input.now),
        eventId: row.event_id,
        eventType: row.event_type,
        body: row.body,
        trigger: row.trigger,
        attempt: row.attempts,
        retryUntil: row.retry_until,
      }));
    },

    /** Records claimed deliveries' attempts; returns the ids of endpoints this disabled. */
    async record(results: readonly DeliveryResult[]): Promise<number[]> {
      if (results.length === 0) return [];
      const column = <T>(pick: (result: DeliveryResult) => T) => results.map(pick);
      const { rows } = await db.query<{ id: string; disable: boolean }>(RECORD_SQL, [
        column((r) => r.deliveryId),
        column((r) => r.leaseToken),
        column((r) => r.endpointId),
        column((r) => r.eventId),
        column((r) => r.eventType),
        column((r) => r.trigger),
        column((r) => r.attempt),
        column((r) => r.attemptedAt),
        column((r) => r.succeeded),
        column((r) => r.statusCode),
        column((r) => r.durationMs),
        column((r) => r.error),
        column((r) => r.outcome.kind),
        column((r) => (r.outcome.kind === 'retry' ? r.outcome.at : null)),
        RETRY_WINDOW_MS,
      ]);
      return rows.filter((row) => row.disable).map((row) => Number(row.id));
    },

    /** Logs an attempt that belongs to no delivery (a test send). */
    async recordTestAttempt(attempt: Omit<AttemptRecord, 'trigger' | 'attempt'>): Promise<LoggedAttempt> {
      const { rows } = await db.query<AttemptRow>(
        `INSERT INTO webhook_delivery_attempts (endpoint_id, event_id, event_type, trigger, attempt, attempted_at,
                                                succeeded, status_code, duration_ms, error)
         VALUES ($1, $2, $3, 'test', 1, $4, $5, $6, $7, $8) RETURNING *`,
        [
          attempt.endpointId,
          attempt.eventId,
          attempt.eventType,
          attempt.attemptedAt,
          attempt.succeeded,
          attempt.statusCode,
          attempt.durationMs,
          attempt.error,
        ],
      );
      return toLoggedAttempt(rows[0]!);
    },

    /** The URL and current signing secrets of one of the owner's endpoints (active or not), or null. */
    async sendingTarget(owner: Owner, endpointId: number, now: Date): Promise<SendingTarget | null> {
      const { rows } = await db.query<{
        id: string;
        url: string;
        secret_sealed: string;
        previous_secret_sealed: string | null;
        previous_secret_expires_at: Date | null;
      }>(
        `SELECT id, url, secret_sealed, previous_secret_sealed, previous_secret_expires_at FROM webhook_endpoints
          WHERE id = $1 AND integration_id = $2 AND mode = $3 AND deleted_at IS NULL`,
        [endpointId, owner.integrationId, owner.mode],
      );
      const row = rows[0];
      return row ? { endpointId: Number(row.id), url: row.url, secrets: signingSecrets(row, now) } : null;
    },

    /**
     * A page of the attempts made to one of the owner's endpoints, newest first; null when the
     * owner has no such endpoint.
     */
    async listAttempts(
      owner: Owner,
      endpointId: number,
      filters: { succeeded?: boolean | undefined; eventId?: string | undefined },
      page: { limit: number; offset: number },
    ): Promise<{ items: LoggedAttempt[]; total: number } | null> {
      const { rows: found } = await db.query(
        'SELECT 1 FROM webhook_endpoints WHERE id = $1 AND integration_id = $2 AND mode = $3 AND deleted_at IS NULL',
        [endpointId, owner.integrationId, owner.mode],
      );
      if (found.length === 0) return null;
      const where = `endpoint_id = $1 AND ($2::boolean IS NULL OR succeeded = $2)
                     AND ($3::text IS NULL OR event_id = $3)`;
      const params = [endpointId, filters.succeeded ?? null, filters.eventId ?? null];
      const { rows, total } = await readPage<AttemptRow>(
        db,
        {
          select: '*',
          from: 'webhook_delivery_attempts',
          where,
          orderBy: 'attempted_at DESC, id DESC',
          params,
        },
        page,
      );
      return { items: rows.map(toLoggedAttempt), total };
    },

    /**
     * A page of the owner's events of the last 30 days, newest first (within one moment, later
     * events of a transfer first), with their deliveries to the owner's current endpoints.
     */
    async listEvents(
      owner: Owner,
      filters: EventFilters,
      page: { limit: number; offset: number },
      now: Date,
    ): Promise<{ items: ListedEvent[]; total: number }> {
      const where = `event.integration_id = $1 AND event.mode = $2 AND event.created_at >= $3
        AND ($4::text IS NULL OR event.type = $4) AND ($5::bigint IS NULL OR event.transfer_id = $5)
        AND ($6::boolean IS NULL OR ${successExpression} = $6)`;
      const params = [
        owner.integrationId,
        owner.mode,
        new Date(now.getTime() - EVENT_WINDOW_MS),
        filters.type ?? null,
        filters.transferId ?? null,
        filters.deliverySuccess ?? null,
      ];
      const { rows, total } = await readPage<{
        id: string;
        payload: Record<string, unknown>;
        success: boolean;
      }>(
        db,
        {
          select: `event.id, event.payload, ${successExpression} AS success`,
          from: 'events event',
          where,
          orderBy:
            'event.created_at DESC, event.transfer_id DESC NULLS LAST, event.sequence DESC NULLS LAST, event.id DESC',
          params,
        },
        page,
      );
      const deliveries = await deliveriesOf(rows.map((row) => row.id));
      return {
        items: rows.map((row) => ({
          id: row.id,
          payload: row.payload,
          deliveries: deliveries.get(row.id) ?? [],
          deliverySuccess: row.success,
        })),
        total,
      };
    },

    /**
     * Queues an event of the last 30 days for delivery again, now: to one endpoint of the owner,
     * or to every active endpoint subscribed to its type. A delivery already in flight is left
     * to finish; any other starts a new round of attempts with a fresh retry window.
     */
    async resend(
      owner: Owner,
      eventId: string,
      endpointId: number | undefined,
      now: Date,
    ): Promise<{ deliveries: EventDelivery[] } | { refused: ResendRefusal }> {
      return db.transaction(async (tx) => {
        const { rows: events } = await tx.query<{
          id: string;
          type: string;
          transfer_id: string | null;
          sequence: number | null;
        }>(
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
        if (endpoints.some((endpoint) => !endpoint.is_active))
          return { refused: 'endpoint_disabled' as const };
        const targetIds = endpoints.map((endpoint) => endpoint.id);
        await tx.query(
          `INSERT INTO webhook_deliveries AS delivery (event_id, endpoint_id, transfer_id, sequence, trigger,
                                                      next_attempt_at, retry_until, created_at)
           SELECT $1, endpoint_id, $2, $3, 'resend', $4, $5, $4 FROM unnest($6::bigint[]) AS target(endpoint_id)
           ON CONFLICT (event_id, endpoint_id) DO UPDATE
              SET status = 'pending', trigger = 'resend', attempts = 0, next_attempt_at = $4, retry_until = $5,
                  lease_token = NULL, completed_at = NULL
            WHERE NOT (delivery.status = 'pending' AND delivery.lease_token IS NOT NULL
                       AND delivery.next_attempt_at > $4)`,
          [
            event.id,
            event.transfer_id,
            event.sequence,
            now,
            new Date(now.getTime() + RETRY_WINDOW_MS),
            targetIds,
          ],
        );
        await tx.query('SELECT pg_notify($1, $2)', [DELIVERY_CHANNEL, '']);
        const { rows } = await tx.query<DeliveryRow>(
          `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries delivery
            WHERE delivery.event_id = $1 AND delivery.endpoint_id = ANY ($2::bigint[]) ORDER BY delivery.endpoint_id`,
          [event.id, targetIds],
        );
        return { deliveries: rows.map(toEventDelivery) };
      });
    },
  };
}

export type DeliveryStore = ReturnType<typeof createDeliveryStore>;
