import { type HistogramBucket, histogramQuantile } from '../domain/histogram.ts';
import type { Sql } from './db.ts';

/*
 * The lateness of recorded hops, rolled up per minute of recording and histogram bucket
 * (`hop_lateness_minutes`, migration 0020, which also owns the buckets: each bound 4.4% above the
 * last). A hop's lateness runs from its due time by the chain's clock (the route's first release
 * plus an interval per hop before it) to its recording with its `transfer.hop_complete` event by
 * the service's clock. A hop cannot land before it is due: one recorded earlier by the service's
 * clock than due by the chain's (clocks apart) counts as on time (0), as the keeper's lateness
 * metric counts it.
 */

const MINUTE_MS = 60_000;
/**
 * The start of the minute `at` falls in, computed here rather than in each row's SQL (the same
 * minute as `date_trunc`'s in any time zone of whole minutes, which every zone today is).
 */
const minuteOf = (at: Date) => new Date(Math.floor(at.getTime() / MINUTE_MS) * MINUTE_MS);

/** Lateness of the hops recorded in a window. */
export interface Lateness {
  hops: number;
  /**
   * Seconds, estimated from the roll-up's buckets (src/domain/histogram.ts): within 4.5% of the
   * exact percentile, or 1 ms. Null when no hop was recorded in the window.
   */
  p50: number | null;
  p99: number | null;
  /** Seconds, exact. */
  max: number | null;
}

/**
 * Adds hop `step` (0-based) of a transfer, recorded at `recordedAt`, to the roll-up, in the
 * caller's transaction (the one that records the hop and appends its event). Its minute's bucket
 * row is held until that transaction ends, so call it last. A transfer without a schedule (none
 * the keeper runs) has no due time: its hop is not counted.
 */
export async function countHopLateness(
  tx: Sql,
  hop: { transferId: number; step: number; recordedAt: Date },
): Promise<void> {
  await tx.query(
    `INSERT INTO hop_lateness_minutes AS rolled (minute, bucket, hops, least_seconds, most_seconds)
     SELECT $4::timestamptz, hop_lateness_bucket(late), 1, late, late
       FROM (SELECT greatest(0, extract(epoch FROM $2::timestamptz)
                     - (first_release_at + $3::int * interval_seconds))::float8 AS late
               FROM transfers WHERE id = $1 AND first_release_at IS NOT NULL) hop
     ON CONFLICT (minute, bucket) DO UPDATE
        SET hops = rolled.hops + 1,
            least_seconds = least(rolled.least_seconds, excluded.least_seconds),
            most_seconds = greatest(rolled.most_seconds, excluded.most_seconds)`,
    [hop.transferId, hop.recordedAt, hop.step, minuteOf(hop.recordedAt)],
  );
}

/**
 * The lateness of the hops recorded in the last hour and the last day, each window from its
 * `since` (the hour's the later), by whole minutes: a window counts the whole minute it starts in.
 * One read of the roll-up's rows.
 */
export async function readLateness(
  db: Sql,
  since: { lastHour: Date; lastDay: Date },
): Promise<{ lastHour: Lateness; lastDay: Lateness }> {
  const { rows } = await db.query<{
    hour_hops: number | null;
    hour_least: number | null;
    hour_most: number | null;
    hops: number;
    least: number;
    most: number;
  }>(
    `SELECT sum(hops) FILTER (WHERE minute >= $1)::int AS hour_hops,
            min(least_seconds) FILTER (WHERE minute >= $1) AS hour_least,
            max(most_seconds) FILTER (WHERE minute >= $1) AS hour_most,
            sum(hops)::int AS hops, min(least_seconds) AS least, max(most_seconds) AS most
       FROM hop_lateness_minutes
      WHERE minute >= $2
      GROUP BY bucket
      ORDER BY bucket`,
    [minuteOf(since.lastHour), minuteOf(since.lastDay)],
  );
  const lastHour = rows.flatMap((row) =>
    row.hour_hops ? [{ count: row.hour_hops, least: row.hour_least!, most: row.hour_most! }] : [],
  );
  const lastDay = rows.map((row) => ({ count: row.hops, least: row.least, most: row.most }));
  return { lastHour: latenessOf(lastHour), lastDay: latenessOf(lastDay) };
}

/** Deletes up to `limit` of the roll-up's rows of minutes before `before`, oldest first; answers how many. */
export async function deleteHopLateness(db: Sql, before: Date, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM hop_lateness_minutes WHERE (minute, bucket) IN (
       SELECT minute, bucket FROM hop_lateness_minutes WHERE minute < $1 ORDER BY minute LIMIT $2)`,
    [before, limit],
  );
  return rowCount;
}

function latenessOf(buckets: HistogramBucket[]): Lateness {
  return {
    hops: buckets.reduce((sum, bucket) => sum + bucket.count, 0),
    p50: histogramQuantile(buckets, 0.5),
    p99: histogramQuantile(buckets, 0.99),
    max: buckets.at(-1)?.most ?? null,
  };
}
