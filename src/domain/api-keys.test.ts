import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiKeyHint, generateApiKey, hashApiKey, parseApiKey } from './api-keys.ts';

test('generated keys carry their mode and 32 base62 characters', () => {
  const test = generateApiKey('test');
  const live = generateApiKey('live');
  assert.match(test, /^mh_test_[0-9A-Za-z]{32}$/);
  assert.match(live, /^mh_live_[0-9A-Za-z]{32}$/);
  assert.equal(parseApiKey(test), 'test');
  assert.equal(parseApiKey(live), 'live');
  assert.notEqual(generateApiKey('test'), test);
});

test('malformed keys are rejected before any lookup', () => {
  for (const candidate of [
    '',
    'mh_test_',
    'mh_prod_0123456789abcdef0123456789abcdef',
    `mh_test_${'a'.repeat(31)}`,
  ]) {
    assert.equal(parseApiKey(candidate), null, candidate);
  }
  assert.equal(parseApiKey(`mh_test_${'a'.repeat(31)}!`), null);
});

test('hash and hint never contain the secret part', () => {
  const key = 'mh_live_0123456789abcdefghijABCDEFGHIJ01';
  assert.equal(hashApiKey(key).toString('hex'), hashApiKey(key).toString('hex'));
  assert.equal(hashApiKey(key).length, 32);
  assert.equal(apiKeyHint(key), 'mh_live_...IJ01');
});
