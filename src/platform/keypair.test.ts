import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { inspect } from 'node:util';
import { generateKeypair, keypairFromKeygenJson, parseKeypairSetting } from './keypair.ts';

/** solana-keygen's file content for a keypair. */
const keygenText = (bytes: number[]) => JSON.stringify(bytes);

test('a keypair setting is the JSON array itself or the path of a solana-keygen file', async () => {
  const keypair = generateKeypair();
  const bytes = keypair.toKeygenArray();
  assert.equal(bytes.length, 64);
  assert.equal(parseKeypairSetting(keygenText(bytes)).address, keypair.address);
  assert.equal(parseKeypairSetting(` ${keygenText(bytes)}\n`).address, keypair.address);
  const dir = await mkdtemp(join(tmpdir(), 'tr-keypair-'));
  try {
    const file = join(dir, 'admin.json');
    await writeFile(file, `${keygenText(bytes)}\n`);
    assert.equal(parseKeypairSetting(file).address, keypair.address);
    // The signer signs as the address the bytes name.
    assert.equal((await keypair.signer()).address, keypair.address);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a malformed keypair is refused with a message that never quotes it', () => {
  const bytes = generateKeypair().toKeygenArray();
  const otherPublicKey = generateKeypair().toKeygenArray().slice(32);
  const cases: [string, RegExp][] = [
    [keygenText(bytes.slice(0, 63)), /must be a JSON array of 64 numbers/],
    [keygenText([...bytes.slice(0, 63), 256]), /must be a JSON array of 64 numbers/],
    [`${keygenText(bytes).slice(0, -1)},]`, /it is not valid JSON/],
    [
      keygenText([...bytes.slice(0, 32), ...otherPublicKey]),
      /is not a keypair: its last 32 bytes are not the public key/,
    ],
    ['/nonexistent/admin.json', /cannot read the file \/nonexistent\/admin\.json \(ENOENT\)/],
  ];
  for (const [text, message] of cases) {
    assert.throws(
      () => parseKeypairSetting(text),
      (error: Error) => {
        assert.match(error.message, message);
        assert.ok(!error.message.includes(bytes.slice(0, 4).join(',')), 'the secret is not quoted');
        return true;
      },
    );
  }
  assert.throws(() => keypairFromKeygenJson({ secret: bytes }), /must be a JSON array of 64 numbers/);
});

test('a keypair shows only its address in JSON and inspection', () => {
  const keypair = generateKeypair();
  const secret = keypair.toKeygenArray().join(',');
  const shown = [
    JSON.stringify({ keypair }),
    inspect(keypair),
    inspect({ nested: { keypair } }),
    String(keypair),
  ];
  for (const text of shown) assert.ok(!text.includes(secret.slice(0, 12)), text);
  assert.equal(JSON.stringify({ keypair }), `{"keypair":"[keypair ${keypair.address}]"}`);
  assert.equal(inspect(keypair), `KeypairBytes(${keypair.address})`);
});
