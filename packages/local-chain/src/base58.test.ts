import assert from 'node:assert/strict';
import { test } from 'node:test';
import { getBase58Decoder, getBase58Encoder } from '@solana/kit';
import fc from 'fast-check';
import { decodeBase58, decodeBase58Exact, encodeBase58 } from './base58.ts';

const kitText = getBase58Decoder();
const kitBytes = getBase58Encoder();

test('base58 agrees with @solana/kit on random bytes, leading zeros included', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 80 }), fc.nat(4), (body, zeros) => {
      const bytes = new Uint8Array(zeros + body.length);
      bytes.set(body, zeros);
      const text = encodeBase58(bytes);
      assert.equal(text, kitText.decode(bytes));
      assert.deepEqual(decodeBase58(text), new Uint8Array(kitBytes.encode(text)));
    }),
    { numRuns: 500 },
  );
});

test('base58 decoding refuses foreign characters and wrong lengths', () => {
  assert.equal(decodeBase58('abc0'), null);
  assert.equal(decodeBase58('Il'), null);
  assert.equal(decodeBase58('é'), null);
  assert.deepEqual(decodeBase58(''), new Uint8Array());
  assert.deepEqual(decodeBase58('11'), new Uint8Array([0, 0]));
  assert.equal(decodeBase58Exact('11111111111111111111111111111111', 32)?.length, 32);
  assert.equal(decodeBase58Exact('1111111111111111111111111111111', 32), null);
  assert.equal(decodeBase58Exact('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', 64), null);
});
