import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { createSecretBox, parseEncryptionKey } from './secret-box.ts';

test('sealed secrets open only under the same key and reveal nothing in the clear', () => {
  const key = randomBytes(32);
  const box = createSecretBox(key);
  const sealed = box.seal('whsec_example-secret');
  assert.ok(!sealed.includes('whsec_example-secret'));
  assert.notEqual(box.seal('whsec_example-secret'), sealed, 'a fresh IV per seal');
  assert.equal(box.open(sealed), 'whsec_example-secret');
  assert.throws(() => createSecretBox(randomBytes(32)).open(sealed));
  const tampered = `${sealed.slice(0, -2)}${sealed.endsWith('AA') ? 'AB' : 'AA'}`;
  assert.throws(() => box.open(tampered));
});

test('encryption keys are accepted as hex or base64 of exactly 32 bytes', () => {
  const key = randomBytes(32);
  assert.deepEqual(parseEncryptionKey(key.toString('hex')), key);
  assert.deepEqual(parseEncryptionKey(key.toString('base64')), key);
  assert.equal(parseEncryptionKey('too-short'), null);
  assert.throws(() => createSecretBox(randomBytes(16)));
});

test('derived keys are HKDF-SHA256 of the encryption key, one per purpose and per key', () => {
  const key = randomBytes(32);
  const box = createSecretBox(key);
  const derived = box.deriveKey('operator-session');
  // RFC 5869 by hand: extract with an all-zero salt, then one block of expansion.
  const prk = createHmac('sha256', Buffer.alloc(32)).update(key).digest();
  const expected = createHmac('sha256', prk)
    .update(Buffer.concat([Buffer.from('transfer-router operator-session'), Buffer.from([1])]))
    .digest();
  assert.deepEqual(derived, expected);
  assert.deepEqual(createSecretBox(key).deriveKey('operator-session'), derived, 'the same in every process');
  assert.notDeepEqual(box.deriveKey('another-purpose'), derived);
  assert.notDeepEqual(createSecretBox(randomBytes(32)).deriveKey('operator-session'), derived);
  assert.notDeepEqual(derived, key);
});
