-- Webhook delivery: one row per (event, endpoint) with its retry state, a log of every HTTP
-- attempt, and the endpoint state that rotation, failure tracking and disabling need.

ALTER TABLE webhook_endpoints
  -- The secret replaced by the last rotation, still signing until `previous_secret_expires_at`.
  ADD COLUMN previous_secret_sealed     text,
  ADD COLUMN previous_secret_expires_at timestamptz,
  -- First failed attempt since the last success; NULL while the endpoint is healthy.
  ADD COLUMN failing_since              timestamptz,
  -- Set when deliveries disabled the endpoint after 3 days of failure; cleared by re-enabling.
  ADD COLUMN disabled_at                timestamptz;

CREATE TABLE webhook_deliveries (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id         text        NOT NULL REFERENCES events (id),
  endpoint_id      bigint      NOT NULL REFERENCES webhook_endpoints (id),
  -- Copied from the event so ordering checks need no join: a later event of one transfer waits
  -- while an earlier one to the same endpoint is pending.
  transfer_id      bigint,
  sequence         integer,
  status           text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  -- What armed the current round of attempts: the event itself, or a resend.
  trigger          text        NOT NULL DEFAULT 'event' CHECK (trigger IN ('event', 'resend')),
  -- Attempts in the current round (a resend or re-enable starts a new round at 0).
  attempts         integer     NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL,
  -- The round's retry window: after a failed attempt at or past it, the delivery fails.
  retry_until      timestamptz NOT NULL,
  -- A worker's claim: the token it must present to record the result. While a delivery is
  -- claimed, `next_attempt_at` is when the claim lapses, so that if its worker died another one
  -- takes the delivery over then.
  lease_token      uuid,
  last_attempt_at  timestamptz,
  last_status_code integer,
  last_error       text,
  created_at       timestamptz NOT NULL,
  completed_at     timestamptz,
  UNIQUE (event_id, endpoint_id)
);
-- The claim's hot path: due and in-flight deliveries of one endpoint.
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at, id)
  WHERE status = 'pending';
-- The per-endpoint cap: how many deliveries of an endpoint workers hold right now.
CREATE INDEX webhook_deliveries_leased_idx ON webhook_deliveries (endpoint_id)
  WHERE status = 'pending' AND lease_token IS NOT NULL;
-- Ordering: is an earlier event of this transfer still pending to this endpoint?
CREATE INDEX webhook_deliveries_order_idx ON webhook_deliveries (endpoint_id, transfer_id, sequence)
  WHERE status = 'pending' AND transfer_id IS NOT NULL;

CREATE TABLE webhook_delivery_attempts (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  endpoint_id      bigint      NOT NULL REFERENCES webhook_endpoints (id),
  -- NULL for test sends, which belong to no event of the outbox.
  delivery_id      bigint      REFERENCES webhook_deliveries (id),
  event_id         text        NOT NULL,
  event_type       text        NOT NULL,
  trigger          text        NOT NULL CHECK (trigger IN ('event', 'resend', 'test')),
  attempt          integer     NOT NULL,
  attempted_at     timestamptz NOT NULL,
  succeeded        boolean     NOT NULL,
  -- NULL when no HTTP response came (refused, timed out, ...); `error` says why.
  status_code      integer,
  duration_ms      real        NOT NULL,
  error            text
);
CREATE INDEX webhook_delivery_attempts_listing_idx
  ON webhook_delivery_attempts (endpoint_id, attempted_at DESC, id DESC);
