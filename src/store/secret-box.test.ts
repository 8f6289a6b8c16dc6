import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
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
