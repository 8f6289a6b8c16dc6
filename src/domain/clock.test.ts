import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createManualClock } from './clock.ts';

test('a manual clock moves only when advanced', () => {
  const clock = createManualClock(new Date('2026-05-01T00:00:00Z'));
  assert.equal(clock.now().toISOString(), '2026-05-01T00:00:00.000Z');
  clock.advance(1500);
  assert.equal(clock.now().toISOString(), '2026-05-01T00:00:01.500Z');
});
