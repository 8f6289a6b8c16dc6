-- The terms each prepare put into a transfer's route creation. The service takes over only a route
-- on chain whose terms are one of these (decisions, "A route that is not the one quoted"); a
-- transfer prepared several times before its route existed has one row per prepare.
CREATE TABLE route_terms (
  id                        bigserial     PRIMARY KEY,
  transfer_id               bigint        NOT NULL REFERENCES transfers (id),
  mint                      text          NOT NULL,
  amount_raw                numeric(20,0) NOT NULL,
  hop_count                 integer       NOT NULL,
  percent_fee_bps           integer       NOT NULL,
  integrator_share_bps      integer       NOT NULL,
  flat_fee_per_hop_lamports numeric(20,0) NOT NULL,
  first_release_at          bigint        NOT NULL,
  interval_seconds          integer       NOT NULL,
  deadline_at               bigint        NOT NULL,
  keeper                    text          NOT NULL,
  recipient                 text          NOT NULL,
  recipient_token           text,
  platform_wallet           text          NOT NULL,
  platform_fee_token        text          NOT NULL,
  integrator_wallet         text          NOT NULL,
  integrator_fee_token      text          NOT NULL,
  screening_required        boolean       NOT NULL,
  max_deposit_lamports      numeric(20,0) NOT NULL,
  prepared_at               timestamptz   NOT NULL
);
CREATE INDEX route_terms_transfer_idx ON route_terms (transfer_id);
