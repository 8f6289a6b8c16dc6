-- What the keeper's hop transactions cost a route: the fees they paid so far, against the fee
-- budget its keeper was funded with (`hop_priority_micro_lamports` is now the price that budget
-- pays each hop at), and the least price the next hop transaction offers, raised each time one
-- expires unlanded so that a worker restarting, or another one, continues the escalation.

ALTER TABLE transfers
  -- Lamports, signature and priority fees, of the keeper's transactions that landed on the route.
  ADD COLUMN hop_fees_spent_lamports        numeric(20,0) NOT NULL DEFAULT 0,
  -- Micro-lamports per compute unit; back to 0 once a hop lands.
  ADD COLUMN hop_least_price_micro_lamports numeric(20,0) NOT NULL DEFAULT 0;
