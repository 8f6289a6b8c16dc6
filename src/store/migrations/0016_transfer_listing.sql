-- The transfer listing at any size. Every filter reads its page from an index in the listing's
-- order (createdAt, then id, descending), and the exact total of a filter comes from totals kept
-- per owner, status and UTC day of creation rather than from counting the rows each time
-- (src/store/transfer-totals.ts).

-- `status`, alone or with a window of creation times. No filter and a window alone are served by
-- transfers_listing_idx, externalId and supportBundleId by their unique indexes. Built here, it holds
-- off writes to transfers while it is built; on a large table an operator builds it beforehand with
-- CREATE INDEX CONCURRENTLY under the same name (docs/operations.md, "Upgrading"), and this keeps
-- it. A concurrent build that failed (or is still running) leaves the index invalid: this stops on
-- one rather than keep an index no query can use.
DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_index WHERE indexrelid = to_regclass('transfers_listing_status_idx') AND NOT indisvalid) THEN
    RAISE EXCEPTION 'index transfers_listing_status_idx is invalid (a concurrent build failed or is still running): drop it and build it again';
  END IF;
END
$$;
CREATE INDEX IF NOT EXISTS transfers_listing_status_idx ON transfers (integration_id, mode, status, created_at DESC, id DESC);

-- How many of an owner's transfers are in each status, as of the last roll-up.
CREATE TABLE transfer_totals (
  integration_id bigint NOT NULL,
  mode           text   NOT NULL,
  status         text   NOT NULL,
  transfers      bigint NOT NULL,
  PRIMARY KEY (integration_id, mode, status)
);

-- The same per UTC day of creation, for windows of creation times. Days that come to hold none
-- are deleted.
CREATE TABLE transfer_day_totals (
  integration_id bigint NOT NULL,
  mode           text   NOT NULL,
  status         text   NOT NULL,
  created_on     date   NOT NULL,
  transfers      bigint NOT NULL,
  -- Days first: a window reads one range of the index, whichever statuses it counts.
  PRIMARY KEY (integration_id, mode, created_on, status) INCLUDE (transfers)
);
-- The days a roll-up emptied, for it to delete (a handful at a time).
CREATE INDEX transfer_day_totals_empty_idx ON transfer_day_totals (created_on) WHERE transfers = 0;

-- The changes since the last roll-up: each transfer inserted, deleted or moved to another status
-- appends its +1 and -1 here, in the transaction that changed it. Appending makes no writer wait
-- for another: totals updated in place would queue an integration's concurrent creates behind
-- each other, and transactions moving several transfers could deadlock on them. The exact total
-- is the rolled-up figure plus these rows, read in one statement.
CREATE TABLE transfer_total_changes (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  integration_id bigint  NOT NULL,
  mode           text    NOT NULL,
  status         text    NOT NULL,
  created_on     date    NOT NULL,
  change         integer NOT NULL
);
CREATE INDEX transfer_total_changes_scope_idx ON transfer_total_changes (integration_id, mode, status, created_on);

CREATE FUNCTION record_transfer_total_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    INSERT INTO transfer_total_changes (integration_id, mode, status, created_on, change)
    VALUES (OLD.integration_id, OLD.mode, OLD.status, (OLD.created_at AT TIME ZONE 'UTC')::date, -1);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO transfer_total_changes (integration_id, mode, status, created_on, change)
    VALUES (NEW.integration_id, NEW.mode, NEW.status, (NEW.created_at AT TIME ZONE 'UTC')::date, 1);
  END IF;
  RETURN NULL;
END;
$$;

CREATE FUNCTION forget_transfer_totals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM transfer_totals;
  DELETE FROM transfer_day_totals;
  DELETE FROM transfer_total_changes;
  RETURN NULL;
END;
$$;

-- Created before the totals are filled: a trigger waits for the transactions writing transfers
-- and holds off new ones until this migration commits, so no transfer is missed or counted twice.
CREATE TRIGGER transfers_totalled AFTER INSERT OR DELETE ON transfers
  FOR EACH ROW EXECUTE FUNCTION record_transfer_total_changes();
CREATE TRIGGER transfers_retotalled AFTER UPDATE OF integration_id, mode, status, created_at ON transfers
  FOR EACH ROW
  WHEN (OLD.integration_id IS DISTINCT FROM NEW.integration_id OR OLD.mode IS DISTINCT FROM NEW.mode
        OR OLD.status IS DISTINCT FROM NEW.status OR OLD.created_at IS DISTINCT FROM NEW.created_at)
  EXECUTE FUNCTION record_transfer_total_changes();
CREATE TRIGGER transfers_truncated AFTER TRUNCATE ON transfers
  FOR EACH STATEMENT EXECUTE FUNCTION forget_transfer_totals();

INSERT INTO transfer_day_totals (integration_id, mode, status, created_on, transfers)
SELECT integration_id, mode, status, (created_at AT TIME ZONE 'UTC')::date, count(*)
  FROM transfers
 GROUP BY 1, 2, 3, 4;
INSERT INTO transfer_totals (integration_id, mode, status, transfers)
SELECT integration_id, mode, status, sum(transfers)
  FROM transfer_day_totals
 GROUP BY 1, 2, 3;
