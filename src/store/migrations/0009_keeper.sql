-- The keeper's work on a route it took over: when it next has something to do (screen the route,
-- run the next hop) on the chain's clock, a worker's claim on it, and the signed transaction of
-- the next hop, stored before it is sent so that a worker that dies can send the same bytes again.

ALTER TABLE transfers
  -- Unix seconds of the chain's clock; null once nothing is left to do.
  ADD COLUMN keeper_due_at      bigint,
  ADD COLUMN keeper_claim       uuid,
  ADD COLUMN keeper_claimed_until timestamptz,
  -- Backoff after a transient failure (wall clock) and how many attempts the next hop has had.
  ADD COLUMN keeper_retry_at    timestamptz,
  ADD COLUMN hop_attempts       integer NOT NULL DEFAULT 0,
  ADD COLUMN hop_tx             text,
  ADD COLUMN hop_tx_signature   text,
  -- The last block height at which `hop_tx`'s blockhash is accepted.
  ADD COLUMN hop_tx_valid_until bigint;

CREATE INDEX transfers_keeper_due_idx ON transfers (keeper_due_at) WHERE status = 'processing';
