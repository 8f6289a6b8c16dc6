-- Sessions of the console (/dashboard): a browser signed in with an API key holds a random token
-- in a cookie, and only the token's SHA-256 is stored here, with the key the session was opened
-- with (never the key itself). Every request re-reads the key and its integration, so revoking
-- the key or suspending the integration ends its sessions at once.
CREATE TABLE console_sessions (
  token_hash   bytea       PRIMARY KEY,
  api_key_id   bigint      NOT NULL REFERENCES api_keys (id),
  created_at   timestamptz NOT NULL,
  -- The earlier of the session's absolute end and its idle end (moved on as it is used).
  expires_at   timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL
);
-- Housekeeping deletes ended sessions, oldest first.
CREATE INDEX console_sessions_expiry_idx ON console_sessions (expires_at);
