-- A recorded hop's lateness is appended here, in the transaction that records the hop, and the
-- roll-up worker folds these rows into hop_lateness_minutes (src/store/hop-lateness.ts). Adding
-- each hop to its minute's bucket row at once made the hops of a minute wait for one another's
-- commits on that row: at 100 hops a second it held the keeper back (docs/operations.md).
CREATE TABLE hop_lateness_recorded (
  id      bigint           GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- The minute of the hop's recording, as hop_lateness_minutes counts it.
  minute  timestamptz      NOT NULL,
  seconds double precision NOT NULL
);
