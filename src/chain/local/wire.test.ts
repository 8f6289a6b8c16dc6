import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type Address,
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
import { createManualClock } from '../../domain/clock.ts';
import { decodeBase58Exact, encodeBase58 } from '../base58.ts';
import { createLedger } from './ledger.ts';
import { isStaticKeyWritable, parseWireTransaction, WireFormatError } from './wire.ts';

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

test('parses legacy and v0 transactions (with lookups) exactly as @solana/kit decodes them', async () => {
  const blockhash = '4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM';
  for (const [version, withLookups] of [
    ['legacy', false],
    [0, false],
    [0, true],
  ] as const) {
    const { bytes, messageBytes } = await sample(version, blockhash, withLookups);
    const padded = new Uint8Array(bytes.length + 3);
    padded.set(bytes);
    const parsed = parseWireTransaction(padded);
    assert.deepEqual(parsed.bytes, bytes);
    assert.deepEqual(parsed.messageBytes, new Uint8Array(messageBytes));
    const kit = getCompiledTransactionMessageDecoder().decode(messageBytes);
    const { message } = parsed;
    assert.equal(message.version, kit.version);
    assert.deepEqual(
      {
        numSignerAccounts: message.numRequiredSignatures,
        numReadonlySignerAccounts: message.numReadonlySigned,
        numReadonlyNonSignerAccounts: message.numReadonlyUnsigned,
      },
      kit.header,
    );
    assert.deepEqual(message.staticKeys.map(encodeBase58), kit.staticAccounts);
    assert.equal(encodeBase58(message.recentBlockhash), blockhash);
    assert.deepEqual(
      message.instructions.map((ix) => ({
        programAddressIndex: ix.programIdIndex,
        accountIndices: [...ix.accounts],
        data: [...ix.data],
      })),
      (
        kit as {
          instructions: { programAddressIndex: number; accountIndices?: number[]; data?: Uint8Array }[];
        }
      ).instructions.map((ix) => ({
        programAddressIndex: ix.programAddressIndex,
        accountIndices: [...(ix.accountIndices ?? [])],
        data: [...(ix.data ?? [])],
      })),
    );
    const lookups = 'addressTableLookups' in kit ? (kit.addressTableLookups ?? []) : [];
    assert.deepEqual(
      message.lookups.map((l) => ({
        lookupTableAddress: encodeBase58(l.table) as Address,
        writableIndexes: [...l.writableIndexes],
        readonlyIndexes: [...l.readonlyIndexes],
      })),
      lookups.map((l) => ({
        ...l,
        writableIndexes: [...l.writableIndexes],
        readonlyIndexes: [...l.readonlyIndexes],
      })),
    );
    assert.equal(message.lookups.length, withLookups ? 1 : 0);
    assert.equal(isStaticKeyWritable(message, 0), true);
  }
});

test('every truncation and random bytes are refused with WireFormatError only', async () => {
  const { bytes } = await sample(0, '4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM', true);
  for (let length = 0; length < bytes.length; length++) {
    assert.throws(() => parseWireTransaction(bytes.subarray(0, length)), WireFormatError);
  }
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), (random) => {
      try {
        parseWireTransaction(random);
      } catch (error) {
        assert.ok(error instanceof WireFormatError);
      }
    }),
  );
  assert.throws(() => parseWireTransaction(Uint8Array.of(0x80, 0x00)), /alias/);
  assert.throws(() => parseWireTransaction(Uint8Array.of(0, 0x81)), /unsupported message version 1/);
});

test('mutated transactions, re-signed or not, never bring the runtime down: each is refused or executed', async () => {
  const ledger = createLedger({ clock: createManualClock() });
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
