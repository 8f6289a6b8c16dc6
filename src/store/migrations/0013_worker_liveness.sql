-- Claims follow the liveness of the process that holds them, not a lease of minutes: each worker
-- process says it is alive every second (src/store/worker-processes.ts), and a route's hop or a
-- webhook delivery held by a process that fell silent is free again within seconds.

CREATE TABLE worker_processes (
  id         uuid        PRIMARY KEY,
  -- Host and process id, for an operator reading the table.
  name       text        NOT NULL,
  started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  seen_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- The processes alive now, each until when it counts as alive without saying so again: it said
-- so within the last 5 seconds, by the database's clock (one clock for every host). A process
-- that stopped cleanly deleted its row. A claim whose holder is not here is free.
CREATE VIEW live_workers AS
  SELECT id, alive_until
    FROM (SELECT id, seen_at + interval '5 seconds' AS alive_until FROM worker_processes) worker
   WHERE alive_until > clock_timestamp();

ALTER TABLE transfers DROP COLUMN keeper_claimed_until,
  ADD COLUMN keeper_claimed_by uuid;

-- The next attempt time of a held delivery is when it is tried again should its holder die: the
-- retry schedule's delay after a failed attempt.
ALTER TABLE webhook_deliveries ADD COLUMN claimed_by uuid;
