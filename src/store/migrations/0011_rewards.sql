-- Integrator rewards: the integrator's shares of settled transfers, credited per integration and
-- mode, and the claims that pay them out to the integration's rewards wallet.

-- One row per integration and mode that earned something or set a wallet: the rewards wallet and
-- the lamport balance (flat fee shares). Every claim locks this row first, so two claims of one
-- owner never overlap. `claimed` counts claims pending or confirmed; a failed claim gives back.
CREATE TABLE reward_accounts (
  integration_id   bigint        NOT NULL REFERENCES integrations (id),
  mode             text          NOT NULL CHECK (mode IN ('test', 'live')),
  wallet           text,
  accrued_lamports numeric(30,0) NOT NULL DEFAULT 0,
  claimed_lamports numeric(30,0) NOT NULL DEFAULT 0 CHECK (claimed_lamports <= accrued_lamports),
  updated_at       timestamptz   NOT NULL,
  PRIMARY KEY (integration_id, mode)
);

-- The percentage fee shares, raw units per mint (the native mint's too).
CREATE TABLE reward_token_balances (
  integration_id bigint        NOT NULL,
  mode           text          NOT NULL,
  mint           text          NOT NULL,
  accrued_raw    numeric(30,0) NOT NULL DEFAULT 0,
  claimed_raw    numeric(30,0) NOT NULL DEFAULT 0 CHECK (claimed_raw <= accrued_raw),
  PRIMARY KEY (integration_id, mode, mint),
  FOREIGN KEY (integration_id, mode) REFERENCES reward_accounts (integration_id, mode)
);

-- The ledger: what each settled transfer credited, once per transfer.
CREATE TABLE reward_accruals (
  transfer_id    bigint        PRIMARY KEY REFERENCES transfers (id),
  integration_id bigint        NOT NULL,
  mode           text          NOT NULL,
  mint           text          NOT NULL,
  amount_raw     numeric(20,0) NOT NULL,
  lamports       numeric(20,0) NOT NULL,
  accrued_at     timestamptz   NOT NULL,
  FOREIGN KEY (integration_id, mode) REFERENCES reward_accounts (integration_id, mode)
);
CREATE INDEX reward_accruals_owner_idx ON reward_accruals (integration_id, mode);

-- A payout of everything claimable to the wallet: its amounts (taken from the balances while it
-- is pending or confirmed), and its one signed transaction, stored before it is first sent.
CREATE TABLE reward_claims (
  id              bigint        GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  integration_id  bigint        NOT NULL,
  mode            text          NOT NULL,
  status          text          NOT NULL CHECK (status IN ('pending', 'confirmed', 'failed')),
  wallet          text          NOT NULL,
  -- What leaves the lamport balance; `rent_lamports` of it pays the wallet's new token accounts.
  lamports        numeric(20,0) NOT NULL,
  rent_lamports   numeric(20,0) NOT NULL CHECK (rent_lamports <= lamports),
  -- [{ "mint": ..., "amountRaw": "..." }]
  tokens          jsonb         NOT NULL,
  transaction     text          NOT NULL,
  signature       text          NOT NULL UNIQUE,
  -- The last block height at which the transaction's blockhash is accepted.
  valid_until     bigint        NOT NULL,
  last_error      text,
  -- The process that created the claim sends it until then; afterwards a worker takes it over.
  lease_until     timestamptz   NOT NULL,
  -- The request that created it, so that its retry answers this claim.
  api_key_id      bigint,
  idempotency_key text,
  created_at      timestamptz   NOT NULL,
  confirmed_at    timestamptz,
  updated_at      timestamptz   NOT NULL,
  FOREIGN KEY (integration_id, mode) REFERENCES reward_accounts (integration_id, mode)
);
CREATE INDEX reward_claims_owner_idx ON reward_claims (integration_id, mode, created_at DESC, id DESC);
CREATE INDEX reward_claims_pending_idx ON reward_claims (lease_until) WHERE status = 'pending';
CREATE UNIQUE INDEX reward_claims_request_idx ON reward_claims (api_key_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
