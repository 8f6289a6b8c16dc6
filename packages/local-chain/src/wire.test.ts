import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  appendTransactionMessageInstructions,
  type Blockhash,
  compressTransactionMessageUsingAddressLookupTables,
  createTransactionMessage,
  generateKeyPairSigner,
  getCompiledTransactionMessageDecoder,
  getTransactionEncoder,
  type KeyPairSigner,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signBytes,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import fc from 'fast-check';
import { decodeBase58Exact } from './base58.ts';
import { createLedger } from './ledger.ts';
import { manualClock } from './testing.ts';
import {
  decodeWireMessage,
  decodeWireTransaction,
  encodeWireMessage,
  encodeWireTransaction,
  isStaticKeyWritable,
  lookupsOf,
  WireFormatError,
} from './wire.ts';

async function sample(
  version: 'legacy' | 0,
  blockhash: string,
  withLookups: boolean,
  signer?: KeyPairSigner,
) {
  const payer = signer ?? (await generateKeyPairSigner());
  const to = (await generateKeyPairSigner()).address;
  const table = (await generateKeyPairSigner()).address;
  const transfer = getTransferSolInstruction({ source: payer, destination: to, amount: lamports(5n) });
  const lifetime = { blockhash: blockhash as Blockhash, lastValidBlockHeight: 10n };
  const legacyMessage = pipe(
    createTransactionMessage({ version: 'legacy' }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) => appendTransactionMessageInstructions([transfer], m),
  );
  const v0Message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) => appendTransactionMessageInstructions([transfer], m),
  );
  const tx =
    version === 'legacy'
      ? await signTransactionMessageWithSigners(legacyMessage)
      : await signTransactionMessageWithSigners(
          withLookups
            ? compressTransactionMessageUsingAddressLookupTables(v0Message, { [table]: [to] })
            : v0Message,
        );
  return { bytes: new Uint8Array(getTransactionEncoder().encode(tx)), messageBytes: tx.messageBytes };
}

test('decodes legacy and v0 transactions (with lookups) as kit signed them, trailing bytes dropped', async () => {
  const blockhash = '4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM';
  for (const [version, withLookups] of [
    ['legacy', false],
    [0, false],
    [0, true],
  ] as const) {
    const { bytes, messageBytes } = await sample(version, blockhash, withLookups);
    const padded = new Uint8Array(bytes.length + 3);
    padded.set(bytes);
    const decoded = decodeWireTransaction(padded);
    assert.deepEqual(decoded.bytes, bytes);
    assert.deepEqual(
      decoded.bytes.subarray(bytes.length - messageBytes.length),
      new Uint8Array(messageBytes),
    );
    assert.deepEqual(
      decoded.signatures.map((signature) => [...signature]),
      [[...bytes.subarray(1, 65)]],
    );
    const { message } = decoded;
    assert.deepEqual(message, getCompiledTransactionMessageDecoder().decode(messageBytes));
    assert.equal(message.version, version);
    assert.equal(message.lifetimeToken, blockhash);
    assert.equal(message.header.numSignerAccounts, 1);
    assert.equal(lookupsOf(message).length, withLookups ? 1 : 0);
    assert.equal(isStaticKeyWritable(message, 0), true);
    assert.equal(isStaticKeyWritable(message, message.staticAccounts.length - 1), false);
    assert.deepEqual(decodeWireMessage(new Uint8Array(messageBytes)), message);
    // Writing back what was read gives the same bytes.
    assert.deepEqual(encodeWireTransaction(decoded.signatures, encodeWireMessage(message)), bytes);
  }
});

test('every truncation, alias encoding and v1 message is refused; random bytes only with WireFormatError', async () => {
  const { bytes } = await sample(0, '4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM', true);
  for (let length = 0; length < bytes.length; length++) {
    assert.throws(() => decodeWireTransaction(bytes.subarray(0, length)), WireFormatError);
  }
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), (random) => {
      try {
        decodeWireTransaction(random);
      } catch (error) {
        assert.ok(error instanceof WireFormatError);
      }
    }),
  );
  assert.throws(() => decodeWireTransaction(Uint8Array.of(0x80, 0x00)), /alias/);
  assert.throws(() => decodeWireTransaction(Uint8Array.of(0, 0x81)), /unsupported message version 1/);
  assert.throws(() => decodeWireMessage(Uint8Array.of(0x81)), /unsupported message version 1/);
  // A length inside the message written in two bytes where one suffices: the length (12) of the
  // transfer's data, which ends a legacy transaction.
  const legacy = (await sample('legacy', '4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM', false)).bytes;
  const dataLength = legacy.length - 12 - 1;
  assert.equal(legacy[dataLength], 12);
  const aliased = new Uint8Array([
    ...legacy.subarray(0, dataLength),
    12 | 0x80,
    0,
    ...legacy.subarray(dataLength + 1),
  ]);
  assert.throws(() => decodeWireTransaction(aliased), /alias/);
});

test('mutated transactions, re-signed or not, never bring the runtime down: each is refused or executed', async () => {
  const ledger = createLedger({ clock: manualClock() });
  const payer = await generateKeyPairSigner();
  ledger.airdrop(decodeBase58Exact(payer.address, 32) as Uint8Array, 1_000_000_000n);
  const { bytes } = await sample(0, ledger.latestBlockhash().blockhash, true, payer);
  const { bytes: legacy } = await sample('legacy', ledger.latestBlockhash().blockhash, false, payer);
  const kinds = new Set<string>();
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(bytes, legacy),
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 6 }),
      fc.boolean(),
      fc.boolean(),
      async (original, edits, resign, preflight) => {
        const mutated = original.slice();
        // Edits land in the message (after the one signature), so re-signing makes them "valid".
        for (const [at, value] of edits) mutated[65 + (at % (mutated.length - 65))] = value;
        if (resign) mutated.set(await signBytes(payer.keyPair.privateKey, mutated.subarray(65)), 1);
        try {
          kinds.add(ledger.submit(mutated, { preflight }).kind);
          ledger.simulate(mutated, {
            sigVerify: false,
            replaceRecentBlockhash: true,
            innerInstructions: true,
          });
        } catch (error) {
          assert.ok(error instanceof WireFormatError, String(error));
        }
      },
    ),
    { numRuns: 400 },
  );
  // The mutations reach every path: refusals before and after execution, and landings.
  assert.deepEqual([...kinds].sort(), ['dropped', 'invalid', 'landed', 'rejected', 'signature-failure']);
});
