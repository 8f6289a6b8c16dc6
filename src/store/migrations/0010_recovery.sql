-- Recovery of a route: the latest rescue or reclaim bundle handed out for a transfer (its
-- signatures are checked against these transactions, so a confirm cannot report another bundle's),
-- the recovery signatures verified on chain, and the lookup of routes past their deadline.

CREATE TABLE recovery_bundles (
  transfer_id  bigint      NOT NULL REFERENCES transfers (id) ON DELETE CASCADE,
  kind         text        NOT NULL CHECK (kind IN ('rescue', 'reclaim')),
  -- The bundle's wire transactions (base64) in broadcast order, as handed out: each message is
  -- what the source's signature must sign.
  transactions jsonb       NOT NULL,
  prepared_at  timestamptz NOT NULL,
  PRIMARY KEY (transfer_id, kind)
);

ALTER TABLE transfers
  -- Signatures of recovery transactions verified on chain, per kind.
  ADD COLUMN recovery_signatures jsonb NOT NULL DEFAULT '{"rescue": [], "reclaim": []}'::jsonb;

-- Routes taken over whose on-chain deadline (chain unix seconds) has passed.
CREATE INDEX transfers_deadline_idx ON transfers (deadline_at) WHERE status = 'processing';
