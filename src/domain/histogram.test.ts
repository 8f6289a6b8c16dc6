import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { type HistogramBucket, histogramQuantile } from './histogram.ts';

/** `percentile_cont` over the values themselves. */
function exactQuantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = q * (sorted.length - 1);
  const below = Math.floor(rank);
  const low = sorted[below]!;
  return rank === below ? low : low + (rank - below) * (sorted[below + 1]! - low);
}

/** The sorted values cut into consecutive buckets of the given sizes (the last takes the rest). */
function bucketsOf(values: readonly number[], sizes: readonly number[]): HistogramBucket[] {
  const sorted = [...values].sort((a, b) => a - b);
  const buckets: HistogramBucket[] = [];
  for (let first = 0, index = 0; first < sorted.length; index++) {
    const part = sorted.slice(first, first + (sizes[index] ?? sorted.length));
    buckets.push({ count: part.length, least: part[0]!, most: part.at(-1)! });
    first += part.length;
  }
  return buckets;
}

test('no values have no percentile', () => {
  assert.equal(histogramQuantile([], 0.5), null);
  assert.equal(histogramQuantile([{ count: 0, least: 0, most: 0 }], 0.99), null);
});

test('buckets of one or two values give percentile_cont exactly', () => {
  const values = [7, 3];
  const buckets = bucketsOf(values, [1, 1]);
  assert.equal(histogramQuantile(buckets, 0.5), 5);
  assert.equal(histogramQuantile(buckets, 0.99), 3 + 0.99 * 4);
  assert.equal(histogramQuantile(buckets, 1), 7);
  assert.equal(histogramQuantile(buckets, 0), 3);
  const pairs = bucketsOf([0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4], [2, 2, 2, 1]);
  for (const q of [0, 0.25, 0.5, 0.9, 0.99, 1]) {
    assert.equal(histogramQuantile(pairs, q), exactQuantile([0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4], q));
  }
});

test('an estimate lies with the exact percentile between the least and the most of the buckets its ranks fall in', () => {
  fc.assert(
    fc.property(
      fc.array(fc.double({ min: 0, max: 3600, noNaN: true }), { minLength: 1, maxLength: 300 }),
      fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 50 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      (values, sizes, q) => {
        const buckets = bucketsOf(values, sizes);
        const estimate = histogramQuantile(buckets, q)!;
        const exact = exactQuantile(values, q);
        const rank = q * (values.length - 1);
        const sorted = [...values].sort((a, b) => a - b);
        const bucketOf = (index: number) => {
          let first = 0;
          for (const bucket of buckets) {
            first += bucket.count;
            if (index < first) return bucket;
          }
          throw new RangeError(`no bucket holds rank ${index}`);
        };
        const low = bucketOf(Math.floor(rank)).least;
        const high = bucketOf(Math.ceil(rank)).most;
        assert.ok(low <= exact && exact <= high, `exact ${exact} in [${low}, ${high}]`);
        // A hair of rounding either side: the interpolations are done in floating point.
        const slack = 1e-9 * Math.max(1, high);
        assert.ok(
          low - slack <= estimate && estimate <= high + slack,
          `estimate ${estimate} in [${low}, ${high}]`,
        );
        assert.ok(sorted[0]! - slack <= estimate && estimate <= sorted.at(-1)! + slack);
      },
    ),
  );
});
