import { nominalRetryDelayMs } from '../../domain/webhook-retry.ts';
import type { Db } from '../db.ts';
import type { DeliveryTrigger } from '../deliveries/event-deliveries.ts';
import type { SealedSecrets, SigningSecrets } from '../deliveries/signing.ts';

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

/**
 * How much to claim: up to `limit` due deliveries from up to `maxEndpoints` endpoints, at most
 * `perEndpoint` in flight per endpoint across all workers (`perFailingEndpoint` while it is
 * failing), held by the worker process `worker` while it is alive.
 */
export interface DueDeliveriesClaim {
  now: Date;
  /** The claiming worker process (src/store/worker-processes.ts). */
  worker: string;
  limit: number;
  perEndpoint: number;
  perFailingEndpoint: number;
  maxEndpoints: number;
}

/**
 * The webhook delivery worker's claim (src/workers/webhook-delivery.ts, through the delivery
 * store's `claim`): due deliveries, each with what it takes to sign and send it at `now`. Each
 * delivery's attempt is counted, it gets a new `lease_token` and names its worker, and its
 * `next_attempt_at` becomes the time of the next attempt should this one fail (the retry
 * schedule, without jitter). The worker's `record` of the attempt, which must name the token, ends
 * the claim; a delivery whose worker died is due again then, as if the attempt had failed.
 */
export async function claimDueDeliveries(
  db: Db,
  signingSecrets: SigningSecrets,
  input: DueDeliveriesClaim,
): Promise<ClaimedDelivery[]> {
  const { rows } = await db.query<ClaimRow>(CLAIM_SQL, [
    input.now,
    input.worker,
    input.perEndpoint,
    input.perFailingEndpoint,
    input.maxEndpoints,
    input.limit,
    RETRY_DELAYS_MS,
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
}

/** The retry schedule's delay after each failed attempt (1-based in SQL); the last one repeats. */
const RETRY_DELAYS_MS = Array.from({ length: 32 }, (_, index) => nominalRetryDelayMs(index + 1));

type ClaimRow = SealedSecrets & {
  id: string;
  lease_token: string;
  endpoint_id: string;
  url: string;
  event_id: string;
  event_type: string;
  body: string;
  trigger: DeliveryTrigger;
  attempts: number;
  retry_until: Date;
};

/** The delivery is held by no live worker. */
const FREE = (delivery: string) =>
  `(${delivery}.lease_token IS NULL OR ${delivery}.claimed_by IS NULL
    OR ${delivery}.claimed_by NOT IN (SELECT id FROM live_workers))`;

/**
 * Claims due deliveries for one worker. Endpoints with free slots are taken first, each locked
 * with SKIP LOCKED so that two workers do not fill one endpoint's slots at once (the per-endpoint
 * cap holds across workers, give or take a claim racing another's commit, since the count is read
 * from the statement's snapshot); then, per endpoint, up to its free slots of due deliveries, oldest due first,
 * skipping any whose transfer has an earlier event still pending to that endpoint, and any that a
 * live worker holds. A claim names its worker (`claimed_by`) and sets `next_attempt_at` to when the
 * delivery is due again should that worker die holding it; the result is only recorded with the
 * claim's `lease_token`. A held delivery takes an endpoint's slot only while its worker lives.
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
                    AND busy.lease_token IS NOT NULL AND busy.claimed_by IN (SELECT id FROM live_workers)) AS free
   ) AS slots
   WHERE endpoint.is_active AND endpoint.deleted_at IS NULL
     -- Endpoints at their cap are left out, so busy endpoints never crowd out the others.
     AND slots.free > 0
     AND EXISTS (SELECT 1 FROM webhook_deliveries due
                  WHERE due.endpoint_id = endpoint.id AND due.status = 'pending' AND due.next_attempt_at <= $1
                    AND ${FREE('due')})
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
        AND ${FREE('due')}
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
     SET attempts = delivery.attempts + 1, lease_token = gen_random_uuid(), claimed_by = $2,
         next_attempt_at = least(
           $1::timestamptz + ($7::float8[])[least(delivery.attempts + 1, cardinality($7::float8[]))]
             * interval '1 millisecond',
           delivery.retry_until)
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
