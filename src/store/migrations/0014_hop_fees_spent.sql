-- What the keeper's transactions on a route cost: the fees they paid so far, against the fee
-- budget its keeper was funded with (`hop_priority_micro_lamports` is now the price that budget
-- pays each hop at). The price a hop transaction rises to after an expiry needs no column: the
-- expired transaction stays stored until the next round replaces it.

ALTER TABLE transfers
  -- Lamports, signature and priority fees, of the keeper's transactions that landed on the route.
  ADD COLUMN hop_fees_spent_lamports numeric(20,0) NOT NULL DEFAULT 0;
