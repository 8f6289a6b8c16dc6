-- The lateness of recorded hops, rolled up per minute of recording (src/store/hop-lateness.ts), so
-- that the keeper's page reads a day of hops from a few rows per minute instead of computing from
-- every `transfer.hop_complete` event of the day.

-- The bucket of a lateness in seconds: bucket k holds (2^((k-1)/16), 2^(k/16)], each bound 4.4%
-- above the last (the layout of Prometheus's native histograms at schema 4); everything up to
-- 2^-10 s (under 1 ms, on-time hops included) is bucket -160.
CREATE FUNCTION hop_lateness_bucket(seconds double precision) RETURNS integer
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT greatest(-160, ceil(16 * ln(greatest(seconds, 1e-4)) / ln(2)))::integer $$;

-- Per minute of recording (the minute of the hop's `transfer.hop_complete` event) and bucket: how
-- many hops, and the least and the most lateness among them. The keeper adds each hop in the
-- transaction that records it; housekeeping deletes minutes past the longest window.
CREATE TABLE hop_lateness_minutes (
  minute        timestamptz      NOT NULL,
  bucket        integer          NOT NULL,
  hops          integer          NOT NULL,
  least_seconds double precision NOT NULL,
  most_seconds  double precision NOT NULL,
  PRIMARY KEY (minute, bucket)
);

-- The hops of the last 25 hours (as long as housekeeping keeps minutes), from their events, with
-- the same lateness as the keeper's page computed from them until now. Events do not wait for it:
-- hops that processes of the previous version record while the service is upgraded are not counted.
INSERT INTO hop_lateness_minutes (minute, bucket, hops, least_seconds, most_seconds)
SELECT date_trunc('minute', recorded_at), hop_lateness_bucket(late), count(*), min(late), max(late)
  FROM (SELECT e.created_at AS recorded_at,
               greatest(0, extract(epoch FROM e.created_at)
                 - (t.first_release_at
                    + (json_extract_path_text(e.payload, 'data', 'transfer', 'progress', 'hopsCompleted')::int - 1)
                      * t.interval_seconds))::float8 AS late
          FROM events e JOIN transfers t ON t.id = e.transfer_id
         WHERE e.type = 'transfer.hop_complete' AND e.created_at >= date_trunc('minute', now() - interval '25 hours')
           AND t.first_release_at IS NOT NULL) hops
 GROUP BY 1, 2;

-- Nothing reads hops from the events any more: the index an earlier 0017 built for it goes (last,
-- as dropping it holds off every use of events until this commits).
DROP INDEX IF EXISTS events_hop_complete_idx;
