import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  MAX_RETRY_DELAY_MS,
  nextRetry,
  nominalRetryDelayMs,
  nominalSchedule,
  RETRY_WINDOW_MS,
} from './webhook-retry.ts';

const at = (iso: string) => new Date(iso);

test('nominal delays grow by 3 from 10 s and stop at 8 h', () => {
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 100].map(nominalRetryDelayMs),
    [
      10_000, 30_000, 90_000, 270_000, 810_000, 2_430_000, 7_290_000, 21_870_000, 28_800_000, 28_800_000,
      28_800_000,
    ],
  );
  assert.throws(() => nominalRetryDelayMs(0), RangeError);
});

test('the nominal schedule: 17 attempts over exactly 3 days, the last when the window closes', () => {
  const seconds = nominalSchedule().map((ms) => ms / 1000);
  assert.deepEqual(
    seconds,
    [
      0, 10, 40, 130, 400, 1210, 3640, 10930, 32800, 61600, 90400, 119200, 148000, 176800, 205600, 234400,
      259200,
    ],
  );
  assert.equal(seconds.at(-1), RETRY_WINDOW_MS / 1000);
});

test('jitter is ±20% of the nominal delay', () => {
  const now = at('2026-06-01T00:00:00Z');
  const retryUntil = new Date(now.getTime() + RETRY_WINDOW_MS);
  assert.deepEqual(nextRetry({ attempt: 1, now, retryUntil, random: 0 }), {
    kind: 'retry',
    at: at('2026-06-01T00:00:08Z'),
  });
  assert.deepEqual(nextRetry({ attempt: 1, now, retryUntil, random: 0.5 }), {
    kind: 'retry',
    at: at('2026-06-01T00:00:10Z'),
  });
  assert.deepEqual(nextRetry({ attempt: 2, now, retryUntil, random: 0.999999 }), {
    kind: 'retry',
    at: at('2026-06-01T00:00:36Z'),
  });
});

test('never schedules past the window; gives up once it has closed', () => {
  const retryUntil = at('2026-06-04T00:00:00Z');
  assert.deepEqual(nextRetry({ attempt: 12, now: at('2026-06-03T23:00:00Z'), retryUntil, random: 0.5 }), {
    kind: 'retry',
    at: retryUntil,
  });
  assert.deepEqual(nextRetry({ attempt: 13, now: retryUntil, retryUntil, random: 0.5 }), { kind: 'give_up' });
  assert.deepEqual(nextRetry({ attempt: 2, now: at('2026-06-05T00:00:00Z'), retryUntil, random: 0 }), {
    kind: 'give_up',
  });
});

test('property: the next attempt is after now, within the window and within the jittered delay', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 50 }),
      fc.integer({ min: 0, max: RETRY_WINDOW_MS - 1 }),
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      (attempt, elapsed, random) => {
        const start = Date.parse('2026-06-01T00:00:00Z');
        const now = new Date(start + elapsed);
        const retryUntil = new Date(start + RETRY_WINDOW_MS);
        const decision = nextRetry({ attempt, now, retryUntil, random });
        assert.equal(decision.kind, 'retry');
        if (decision.kind !== 'retry') return;
        const delay = decision.at.getTime() - now.getTime();
        assert.ok(delay > 0);
        assert.ok(decision.at.getTime() <= retryUntil.getTime());
        assert.ok(delay <= Math.ceil(MAX_RETRY_DELAY_MS * 1.2));
      },
    ),
  );
});
