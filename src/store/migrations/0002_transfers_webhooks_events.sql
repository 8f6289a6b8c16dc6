-- Transfers (quotes onwards), the outbox of their events, and webhook endpoints.
--
-- Transfers and events name their integration without a foreign key: every insert would lock the
-- integration's row (FOR KEY SHARE), and the concurrent creates of one integration would contend
-- on it. Integrations are never deleted, and every write takes its owner from an authenticated key.

CREATE TABLE transfers (
  id                             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  integration_id                 bigint        NOT NULL,
  mode                           text          NOT NULL CHECK (mode IN ('test', 'live')),
  external_id                    text,
  support_bundle_id              text          NOT NULL UNIQUE,
  -- SHA-256 of the create parameters, to tell a repeated create (same externalId) from a conflicting one.
  create_fingerprint             bytea         NOT NULL,
  token_mint                     text          NOT NULL,
  token_symbol                   text,
  token_decimals                 smallint      NOT NULL CHECK (token_decimals BETWEEN 0 AND 18),
  amount_raw                     numeric(20,0) NOT NULL CHECK (amount_raw > 0),
  amount_tokens                  text          NOT NULL,
  source_owner                   text          NOT NULL,
  recipient_wallet               text          NOT NULL,
  funding_strategy               text          NOT NULL,
  hops                           smallint      NOT NULL CHECK (hops BETWEEN 3 AND 10),
  arrival_seconds                integer       NOT NULL CHECK (arrival_seconds >= 60),
  -- Pricing locked at quote time.
  token_price_usd                text          NOT NULL,
  price_source                   text          NOT NULL,
  usd_equivalent                 double precision NOT NULL,
  pricing_tier                   text          NOT NULL,
  percent_fee_bps                integer       NOT NULL,
  percent_fee_raw                numeric(20,0) NOT NULL,
  integrator_percent_share_raw   numeric(20,0) NOT NULL,
  net_delivered_raw              numeric(20,0) NOT NULL CHECK (net_delivered_raw > 0),
  flat_fee_lamports_per_hop      numeric(20,0) NOT NULL,
  total_flat_fee_lamports        numeric(20,0) NOT NULL,
  integrator_flat_share_lamports numeric(20,0) NOT NULL,
  -- Lifecycle.
  status                         text          NOT NULL CHECK (status IN
                                   ('quote', 'awaiting_signature', 'processing', 'completed', 'failed', 'expired', 'refunded')),
  phase                          text          NOT NULL CHECK (phase IN
                                   ('quoted', 'funding', 'deploying', 'executing', 'settled', 'failed', 'recoverable',
                                    'expired', 'rescued', 'reclaimed')),
  hops_completed                 smallint      NOT NULL DEFAULT 0,
  last_error                     jsonb,
  recovery                       jsonb,
  signatures                     jsonb         NOT NULL DEFAULT '{"routeInit": [], "sessionInit": [], "hops": []}'::jsonb,
  -- Per-transfer event counter: events carry it as `sequence` so receivers can detect gaps.
  event_sequence                 integer       NOT NULL DEFAULT 0,
  quoted_at                      timestamptz   NOT NULL,
  expires_at                     timestamptz   NOT NULL,
  deposit_received_at            timestamptz,
  completed_at                   timestamptz,
  expired_at                     timestamptz,
  created_at                     timestamptz   NOT NULL,
  updated_at                     timestamptz   NOT NULL
);
CREATE UNIQUE INDEX transfers_external_id_idx ON transfers (integration_id, mode, external_id)
  WHERE external_id IS NOT NULL;
CREATE INDEX transfers_listing_idx ON transfers (integration_id, mode, created_at DESC, id DESC);
CREATE INDEX transfers_expiry_idx ON transfers (expires_at) WHERE status = 'quote';

CREATE TABLE events (
  id             text        PRIMARY KEY,
  integration_id bigint      NOT NULL,
  mode           text        NOT NULL CHECK (mode IN ('test', 'live')),
  type           text        NOT NULL,
  transfer_id    bigint      REFERENCES transfers (id),
  sequence       integer,
  -- The event exactly as delivered, byte for byte: { id, type, createdAt, isTest, apiVersion,
  -- sequence, data } (json, not jsonb, so the text is kept as written).
  payload        json        NOT NULL,
  created_at     timestamptz NOT NULL,
  UNIQUE (transfer_id, sequence)
);
CREATE INDEX events_listing_idx ON events (integration_id, mode, created_at DESC);

CREATE TABLE webhook_endpoints (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  integration_id   bigint      NOT NULL REFERENCES integrations (id),
  mode             text        NOT NULL CHECK (mode IN ('test', 'live')),
  url              text        NOT NULL,
  -- NULL means every event type, including types added later.
  events           text[],
  -- Encrypted at rest with the service's encryption key.
  secret_sealed    text        NOT NULL,
  is_active        boolean     NOT NULL DEFAULT true,
  created_at       timestamptz NOT NULL,
  deleted_at       timestamptz
);
CREATE INDEX webhook_endpoints_owner_idx ON webhook_endpoints (integration_id, mode) WHERE deleted_at IS NULL;
