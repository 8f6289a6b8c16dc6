import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createBatcher } from './batcher.ts';

test('calls of one event-loop turn run as one batch, each caller getting its own result', async () => {
  const batches: number[][] = [];
  const double = createBatcher<number, number>({
    maxBatch: 3,
    run: async (inputs) => {
      batches.push(inputs);
      return inputs.map((input) => input * 2);
    },
  });
  const results = await Promise.all([1, 2, 3, 4, 5].map(double));
  assert.deepEqual(results, [2, 4, 6, 8, 10]);
  assert.deepEqual(batches, [
    [1, 2, 3],
    [4, 5],
  ]);
  assert.equal(await double(7), 14);
  assert.deepEqual(batches.at(-1), [7]);
});

test('a failing batch is retried call by call, so only the bad input fails', async () => {
  const seen: number[][] = [];
  const check = createBatcher<number, string>({
    maxBatch: 10,
    run: async (inputs) => {
      seen.push(inputs);
      if (inputs.includes(13)) throw new Error('unlucky');
      return inputs.map(String);
    },
  });
  const results = await Promise.allSettled([12, 13, 14].map(check));
  assert.deepEqual(
    results.map((result) =>
      result.status === 'fulfilled' ? result.value : (result.reason as Error).message,
    ),
    ['12', 'unlucky', '14'],
  );
  assert.deepEqual(seen, [[12, 13, 14], [12], [13], [14]]);
});

test('when the database is unreachable a batch fails at once, without a retry per call', async () => {
  let runs = 0;
  const write = createBatcher<number, number>({
    maxBatch: 10,
    run: async () => {
      runs++;
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    },
  });
  const results = await Promise.allSettled([1, 2, 3].map(write));
  assert.deepEqual(
    results.map((result) => result.status),
    ['rejected', 'rejected', 'rejected'],
  );
  assert.equal(runs, 1);
});
