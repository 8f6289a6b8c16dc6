-- A recorded hop's lateness is appended here, in the transaction that records the hop, and the
-- roll-up worker folds these rows into hop_lateness_minutes (src/store/hop-lateness.ts). Adding
-- each hop to its minute's bucket row at once made the hops of a minute wait for one another's
-- commits on that row (equally late hops' recording p99 went from 45 to 120 ms:
-- docs/operations.md, "The keeper page at scale").
CREATE TABLE hop_lateness_recorded (
  id      bigint           GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- The minute of the hop's recording, as hop_lateness_minutes counts it.
  minute  timestamptz      NOT NULL,
  seconds double precision NOT NULL
);
