-- The operator's console (/dashboard/operator), opened with the admin token.

-- A console session is an integrator's (opened with an API key) or an operator's (opened with the
-- admin token). An operator's session keeps no key, and never the token: only an HMAC of the
-- session's token hash keyed by the admin token it was opened with, so that a session ends once
-- ADMIN_TOKEN changes, and a stored row proves nothing without the session's own token.
ALTER TABLE console_sessions
  ADD COLUMN kind text NOT NULL DEFAULT 'integrator' CHECK (kind IN ('integrator', 'operator')),
  ADD COLUMN admin_token_mac bytea,
  ALTER COLUMN api_key_id DROP NOT NULL,
  ADD CONSTRAINT console_sessions_kind_holds CHECK (
    (kind = 'integrator' AND api_key_id IS NOT NULL AND admin_token_mac IS NULL)
    OR (kind = 'operator' AND api_key_id IS NULL AND admin_token_mac IS NOT NULL)
  );
-- Every new session names its kind.
ALTER TABLE console_sessions ALTER COLUMN kind DROP DEFAULT;

-- When a key last opened a console session or authenticated an API request, to the minute (each
-- process records a key's use at most once a minute).
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;

-- The keeper's health reads the routes that failed, newest first. (It read recent hops through an
-- index on events, events_hop_complete_idx, built here until migration 0020 rolled their lateness
-- up; 0020 drops it where it was built.) As with 0016's index, an operator may build this one
-- beforehand with CREATE INDEX CONCURRENTLY under the same name (docs/operations.md, "Upgrading").
DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_index WHERE indexrelid = to_regclass('transfers_failed_idx') AND NOT indisvalid) THEN
    RAISE EXCEPTION 'index transfers_failed_idx is invalid (a concurrent build failed or is still running): drop it and build it again';
  END IF;
END
$$;
CREATE INDEX IF NOT EXISTS transfers_failed_idx ON transfers (updated_at) WHERE phase IN ('failed', 'recoverable');
