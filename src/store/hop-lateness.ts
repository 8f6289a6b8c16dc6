import { type HistogramBucket, histogramQuantile } from '../domain/histogram.ts';
import type { Db, Sql } from './db.ts';
import { withRollUpLock } from './roll-up-lock.ts';

/*
 * The lateness of recorded hops, rolled up per minute of recording and histogram bucket
 * (`hop_lateness_minutes`, migration 0020, which also owns the buckets: each bound 4.4% above the
 * last). Recording a hop appends its lateness (`hop_lateness_recorded`, migration 0021), which
 * takes no row another hop needs; the roll-up worker folds what was appended into the minutes, and
 * a read counts what is not folded yet too, so it is current whenever it is read. A hop's
 * lateness runs from its due time by the chain's clock (the route's first release plus an
 * interval per hop before it) to its recording with its `transfer.hop_complete` event by the
 * service's clock. A hop cannot land before it is due: one recorded earlier by the service's
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
 * Counts hop `step` (0-based) of a transfer, recorded at `recordedAt`, in the caller's transaction
 * (the one that records the hop and appends its event). A transfer without a schedule (none the
 * keeper runs) has no due time: its hop is not counted.
 */
export async function countHopLateness(
  tx: Sql,
  hop: { transferId: number; step: number; recordedAt: Date },
): Promise<void> {
  await tx.query(
    `INSERT INTO hop_lateness_recorded (minute, seconds)
     SELECT $4::timestamptz, greatest(0, extract(epoch FROM $2::timestamptz)
                               - (first_release_at + $3::int * interval_seconds))::float8
       FROM transfers WHERE id = $1 AND first_release_at IS NOT NULL`,
    [hop.transferId, hop.recordedAt, hop.step, minuteOf(hop.recordedAt)],
  );
}

/** Arbitrary constant: the advisory lock a roll-up holds, so that one runs at a time. */
const ROLL_UP_LOCK_KEY = 4_271_003_021;

/**
 * Folds up to `batchSize` of the oldest appended hops into their minutes' buckets; answers how many
 * it folded (0 as well when another roll-up is running).
 */
export function rollUpHopLateness(db: Db, batchSize: number): Promise<number> {
  return withRollUpLock(db, ROLL_UP_LOCK_KEY, async (tx) => {
    // Rows are upserted in key order, so that the locks they take never cross another writer's.
    const { rows } = await tx.query<{ folded: string }>(
      `WITH folded AS (
         DELETE FROM hop_lateness_recorded
          WHERE id IN (SELECT id FROM hop_lateness_recorded ORDER BY id LIMIT $1)
         RETURNING minute, seconds
       ), added AS (
         INSERT INTO hop_lateness_minutes AS rolled (minute, bucket, hops, least_seconds, most_seconds)
         SELECT minute, hop_lateness_bucket(seconds), count(*), min(seconds), max(seconds)
           FROM folded GROUP BY 1, 2 ORDER BY 1, 2
         ON CONFLICT (minute, bucket) DO UPDATE
            SET hops = rolled.hops + excluded.hops,
                least_seconds = least(rolled.least_seconds, excluded.least_seconds),
                most_seconds = greatest(rolled.most_seconds, excluded.most_seconds)
       )
       SELECT count(*) AS folded FROM folded`,
      [batchSize],
    );
    return Number(rows[0]!.folded);
  });
}

/**
 * The lateness of the hops recorded in the last hour and the last day, each window from its
 * `since` (the hour's the later), by whole minutes: a window counts the whole minute it starts in.
 * One read of the roll-up's rows and the hops not folded yet.
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
       FROM (SELECT minute, bucket, hops, least_seconds, most_seconds
               FROM hop_lateness_minutes WHERE minute >= $2
             UNION ALL
             SELECT minute, hop_lateness_bucket(seconds), 1, seconds, seconds
               FROM hop_lateness_recorded WHERE minute >= $2) minutes
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
