-- What the service keeps of a transfer's route while it is deployed and taken over: the route's
-- address, the transfer's own keeper (a fresh key, sealed under ENCRYPTION_KEY), the keeper's
-- funding, the signatures the source reported, and the schedule read back from the chain.

ALTER TABLE transfers
  -- The route account (`["route", source, id]`), fixed by the first prepare.
  ADD COLUMN route_address               text UNIQUE,
  ADD COLUMN keeper_address              text UNIQUE,
  ADD COLUMN keeper_secret               text,
  -- Lamports the bundle moves to the keeper, and the compute-unit price they pay the hops at.
  ADD COLUMN keeper_funding_lamports     numeric(20,0),
  ADD COLUMN hop_priority_micro_lamports numeric(20,0),
  -- A prepared bundle asked the source to fund the keeper; its signature must then be reported.
  ADD COLUMN keeper_funding_in_bundle    boolean       NOT NULL DEFAULT false,
  ADD COLUMN keeper_funding_signature    text,
  ADD COLUMN orchestrator_signature      text,
  ADD COLUMN prepared_at                 timestamptz,
  -- When the reconciler next looks at the chain for a prepared transfer (claimed ahead by the
  -- process that does).
  ADD COLUMN next_check_at               timestamptz,
  -- The route's schedule as deployed (unix seconds of the chain's clock), from the route account.
  ADD COLUMN first_release_at            bigint,
  ADD COLUMN interval_seconds            integer,
  ADD COLUMN deadline_at                 bigint,
  ADD CONSTRAINT transfers_keeper_sealed CHECK ((keeper_address IS NULL) = (keeper_secret IS NULL));

CREATE INDEX transfers_deployment_checks_idx ON transfers (next_check_at) WHERE status = 'awaiting_signature';
