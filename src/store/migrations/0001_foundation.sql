-- Integrations (API clients), their API keys, and stored idempotent responses.

CREATE TABLE integrations (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name        text        NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  status      text        NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  -- Only the settings an operator set; defaults are applied when read.
  settings    jsonb       NOT NULL DEFAULT '{}'::jsonb,
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL
);

CREATE TABLE api_keys (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  integration_id bigint      NOT NULL REFERENCES integrations (id),
  mode           text        NOT NULL CHECK (mode IN ('test', 'live')),
  -- SHA-256 of the full key; the key itself is never stored.
  key_hash       bytea       NOT NULL UNIQUE,
  -- Prefix and last four characters, enough for an operator to recognise a key.
  key_hint       text        NOT NULL,
  created_at     timestamptz NOT NULL,
  revoked_at     timestamptz
);
CREATE INDEX api_keys_integration_idx ON api_keys (integration_id);

CREATE TABLE idempotency_keys (
  -- 'key:<api key id>' for the public API, 'admin' for the admin API.
  scope           text        NOT NULL,
  key             text        NOT NULL,
  request_hash    bytea       NOT NULL,
  method          text        NOT NULL,
  path            text        NOT NULL,
  state           text        NOT NULL CHECK (state IN ('in_progress', 'completed')),
  locked_at       timestamptz NOT NULL,
  response_status integer,
  response_body   text,
  created_at      timestamptz NOT NULL,
  completed_at    timestamptz,
  PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);
