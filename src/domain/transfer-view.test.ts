import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lamportsToJson } from './transfer-view.ts';

test('lamport figures become JSON integers only when exact', () => {
  assert.equal(lamportsToJson(0n), 0);
  assert.equal(lamportsToJson(9_007_199_254_740_991n), Number.MAX_SAFE_INTEGER);
  assert.throws(() => lamportsToJson(9_007_199_254_740_992n), RangeError);
  assert.throws(() => lamportsToJson(-1n), RangeError);
});
