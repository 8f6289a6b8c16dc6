import type { Owner } from '../../domain/integration.ts';
import { RETRY_WINDOW_MS } from '../../domain/webhook-retry.ts';
import type { Db } from '../db.ts';
import { readPage } from '../paging.ts';
import type { DeliveryTrigger } from './event-deliveries.ts';

/*
 * The attempts log: every HTTP attempt of a delivery (or a test send), what each changes of its
 * delivery and its endpoint's failure tracking, and the log as the owner's tools list it.
 */

export type AttemptTrigger = DeliveryTrigger | 'test';

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
  /** The start of the response body; null when no response came. */
  responseExcerpt: string | null;
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

/** Which logged attempts to list: all, or only those that succeeded (or not), of these events, of a trigger. */
export interface AttemptFilters {
  succeeded?: boolean | undefined;
  eventIds?: readonly string[] | undefined;
  trigger?: AttemptTrigger | undefined;
}

/** Records claimed deliveries' attempts; returns the ids of endpoints this disabled. */
export async function recordAttempts(db: Db, results: readonly DeliveryResult[]): Promise<number[]> {
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
    column((r) => r.responseExcerpt),
    column((r) => r.durationMs),
    column((r) => r.error),
    column((r) => r.outcome.kind),
    column((r) => (r.outcome.kind === 'retry' ? r.outcome.at : null)),
    RETRY_WINDOW_MS,
  ]);
  return rows.filter((row) => row.disable).map((row) => Number(row.id));
}

/** Logs an attempt that belongs to no delivery (a test send). */
export async function recordTestAttempt(
  db: Db,
  attempt: Omit<AttemptRecord, 'trigger' | 'attempt'>,
): Promise<LoggedAttempt> {
  const { rows } = await db.query<AttemptRow>(
    `INSERT INTO webhook_delivery_attempts (endpoint_id, event_id, event_type, trigger, attempt, attempted_at,
                                            succeeded, status_code, response_excerpt, duration_ms, error)
     VALUES ($1, $2, $3, 'test', 1, $4, $5, $6, $7, $8, $9) RETURNING *`,
    [
      attempt.endpointId,
      attempt.eventId,
      attempt.eventType,
      attempt.attemptedAt,
      attempt.succeeded,
      attempt.statusCode,
      attempt.responseExcerpt,
      attempt.durationMs,
      attempt.error,
    ],
  );
  return toLoggedAttempt(rows[0]!);
}

/**
 * A page of the attempts made to one of the owner's endpoints, newest first; null when the
 * owner has no such endpoint.
 */
export async function listAttempts(
  db: Db,
  owner: Owner,
  endpointId: number,
  filters: AttemptFilters,
  page: { limit: number; offset: number },
): Promise<{ items: LoggedAttempt[]; total: number } | null> {
  const { rows: found } = await db.query(
    'SELECT 1 FROM webhook_endpoints WHERE id = $1 AND integration_id = $2 AND mode = $3 AND deleted_at IS NULL',
    [endpointId, owner.integrationId, owner.mode],
  );
  if (found.length === 0) return null;
  const where = `endpoint_id = $1 AND ($2::boolean IS NULL OR succeeded = $2)
                 AND ($3::text[] IS NULL OR event_id = ANY ($3)) AND ($4::text IS NULL OR trigger = $4)`;
  const params = [endpointId, filters.succeeded ?? null, filters.eventIds ?? null, filters.trigger ?? null];
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
}

/**
 * Records a batch of attempts in one statement: the log rows, each delivery's new state (only
 * while the recording worker still holds its claim), and each endpoint's failure tracking. An
 * endpoint is disabled when a delivery to it gave up and it has had no success for the whole
 * retry window. Returns the endpoints disabled.
 */
const RECORD_SQL = `
WITH result AS (
  SELECT * FROM unnest($1::bigint[], $2::uuid[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::int[],
                       $8::timestamptz[], $9::boolean[], $10::int[], $11::text[], $12::real[], $13::text[],
                       $14::text[], $15::timestamptz[])
    AS r(delivery_id, lease_token, endpoint_id, event_id, event_type, trigger, attempt, attempted_at, succeeded,
         status_code, response_excerpt, duration_ms, error, outcome, next_attempt_at)
), updated AS (
  UPDATE webhook_deliveries delivery
     SET status = CASE result.outcome WHEN 'retry' THEN 'pending' ELSE result.outcome END,
         next_attempt_at = coalesce(result.next_attempt_at, delivery.next_attempt_at),
         lease_token = NULL,
         claimed_by = NULL,
         last_attempt_at = result.attempted_at,
         last_status_code = result.status_code,
         last_error = result.error,
         completed_at = CASE WHEN result.outcome = 'retry' THEN NULL ELSE result.attempted_at END
    FROM result
   WHERE delivery.id = result.delivery_id AND delivery.lease_token = result.lease_token
  RETURNING delivery.id
), logged AS (
  INSERT INTO webhook_delivery_attempts (endpoint_id, delivery_id, event_id, event_type, trigger, attempt,
                                         attempted_at, succeeded, status_code, response_excerpt, duration_ms, error)
  SELECT endpoint_id, delivery_id, event_id, event_type, trigger, attempt, attempted_at, succeeded, status_code,
         response_excerpt, duration_ms, error
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
               <= per_endpoint.last_attempt - make_interval(secs => $16::double precision / 1000) AS disable,
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
  response_excerpt: string | null;
  duration_ms: number;
  error: string | null;
};

function toLoggedAttempt(row: AttemptRow): LoggedAttempt {
  return {
    id: Number(row.id),
    endpointId: Number(row.endpoint_id),
    eventId: row.event_id,
    eventType: row.event_type,
    trigger: row.trigger,
    attempt: row.attempt,
    attemptedAt: row.attempted_at,
    succeeded: row.succeeded,
    statusCode: row.status_code,
    responseExcerpt: row.response_excerpt,
    durationMs: row.duration_ms,
    error: row.error,
  };
}
