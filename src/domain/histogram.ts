/**
 * Percentiles from a histogram that keeps, for each bucket, how many values fell in it and the
 * least and the most of them (the hop lateness roll-up, src/store/hop-lateness.ts).
 */

/** One bucket; buckets come in order: no value of a bucket exceeds a value of a later one. */
export interface HistogramBucket {
  count: number;
  least: number;
  most: number;
}

/**
 * The `q`-quantile (0 to 1) as PostgreSQL's `percentile_cont` computes it over the values (the
 * value at rank q·(n − 1), interpolated between the two around it), each value estimated from its
 * bucket, whose values are taken as spread evenly from its least to its most. It is exact when
 * the buckets those ranks fall in hold two values or fewer; otherwise the estimate and the exact
 * figure both lie between the least and the most of those buckets. Null for no values.
 */
export function histogramQuantile(buckets: readonly HistogramBucket[], q: number): number | null {
  const total = buckets.reduce((sum, bucket) => sum + bucket.count, 0);
  if (total === 0) return null;
  const rank = q * (total - 1);
  const below = Math.floor(rank);
  const low = valueAt(buckets, below);
  return rank === below ? low : low + (rank - below) * (valueAt(buckets, below + 1) - low);
}

/** The estimate of the value of rank `rank` (0 the least). */
function valueAt(buckets: readonly HistogramBucket[], rank: number): number {
  let first = 0;
  for (const bucket of buckets) {
    if (rank < first + bucket.count) {
      if (bucket.count === 1) return bucket.least;
      return bucket.least + ((bucket.most - bucket.least) * (rank - first)) / (bucket.count - 1);
    }
    first += bucket.count;
  }
  throw new RangeError(`rank ${rank} is past the histogram's ${first} values`);
}
