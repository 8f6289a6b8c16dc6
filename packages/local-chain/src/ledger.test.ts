import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  appendTransactionMessageInstructions,
  type Blockhash,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressEncoder,
  getTransactionEncoder,
  type Instruction,
  type KeyPairSigner,
  lamports,
  type Nonce,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  setTransactionMessageLifetimeUsingDurableNonce,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import {
  getSetComputeUnitLimitInstruction,
  getSetComputeUnitPriceInstruction,
} from '@solana-program/compute-budget';
import {
  getCreateAccountInstruction,
  getInitializeNonceAccountInstruction,
  getTransferSolInstruction,
  SYSTEM_PROGRAM_ADDRESS,
} from '@solana-program/system';
import { encodeBase58 } from './base58.ts';
import { createLedger, type Ledger } from './ledger.ts';
import { manualClock } from './testing.ts';

const SOL = 1_000_000_000n;
const key = (address: string) => new Uint8Array(getAddressEncoder().encode(address as never));

function setup() {
  const clock = manualClock(new Date('2026-07-01T00:00:00.000Z'));
  const ledger = createLedger({ clock });
  return { clock, ledger };
}

async function funded(ledger: Ledger, sol = 10n): Promise<KeyPairSigner> {
  const signer = await generateKeyPairSigner();
  const outcome = ledger.airdrop(key(signer.address), sol * SOL);
  assert.equal(outcome.kind, 'landed');
  return signer;
}

async function signed(
  ledger: Ledger,
  payer: KeyPairSigner,
  instructions: Instruction[],
): Promise<Uint8Array> {
  const { blockhash, lastValidBlockHeight } = ledger.latestBlockhash();
  const tx = await pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: blockhash as Blockhash, lastValidBlockHeight: BigInt(lastValidBlockHeight) },
        m,
      ),
    (m) => appendTransactionMessageInstructions(instructions, m),
    (m) => signTransactionMessageWithSigners(m),
  );
  return new Uint8Array(getTransactionEncoder().encode(tx));
}

test('slots follow the clock at 400 ms each, and the Clock sysvar follows the slots', () => {
  const { clock, ledger } = setup();
  const start = clock.now().getTime();
  assert.equal(ledger.slot(), 0);
  clock.advance(399);
  assert.equal(ledger.slot(), 0);
  clock.advance(1);
  assert.equal(ledger.slot(), 1);
  clock.advance(4000);
  assert.equal(ledger.slot(), 11);
  assert.equal(ledger.unixTimestamp(), Math.floor((start + 11 * 400) / 1000));
  const clockSysvar = ledger.getAccount(key('SysvarC1ock11111111111111111111111111111111'))
    ?.data as Uint8Array;
  const view = new DataView(clockSysvar.buffer, clockSysvar.byteOffset);
  assert.equal(view.getBigUint64(0, true), 11n);
  assert.equal(view.getBigInt64(32, true), BigInt(Math.floor((start + 11 * 400) / 1000)));
});

test('a blockhash is accepted for exactly 150 slots after its own', async () => {
  const { clock, ledger } = setup();
  const payer = await funded(ledger);
  const to = (await generateKeyPairSigner()).address;
  const first = await signed(ledger, payer, [
    getTransferSolInstruction({ source: payer, destination: to, amount: lamports(SOL) }),
  ]);
  const second = await signed(ledger, payer, [
    getTransferSolInstruction({ source: payer, destination: to, amount: lamports(2n * SOL) }),
  ]);
  clock.advance(150 * 400);
  assert.equal(ledger.submit(first, { preflight: true }).kind, 'landed');
  clock.advance(400);
  const late = ledger.submit(second, { preflight: true });
  assert.equal(late.kind, 'rejected');
  assert.equal(late.kind === 'rejected' && late.error.json, 'BlockhashNotFound');
  assert.equal(ledger.getBalance(key(to)), SOL);
});

test('the status cache forgets after 300 slots; history still has the transaction', async () => {
  const { clock, ledger } = setup();
  const payer = await funded(ledger);
  const tx = await signed(ledger, payer, [
    getTransferSolInstruction({
      source: payer,
      destination: (await generateKeyPairSigner()).address,
      amount: lamports(SOL),
    }),
  ]);
  const outcome = ledger.submit(tx, { preflight: true });
  assert.equal(outcome.kind, 'landed');
  clock.advance(300 * 400);
  assert.equal(ledger.signatureStatus(outcome.signature, false)?.signature, outcome.signature);
  clock.advance(400);
  assert.equal(ledger.signatureStatus(outcome.signature, false), null);
  assert.equal(ledger.signatureStatus(outcome.signature, true)?.slot, 0);
});

test('recorded fees equal what the runtime takes, priority fees included', async () => {
  const { ledger } = setup();
  const payer = await funded(ledger);
  const to = (await generateKeyPairSigner()).address;
  const cases: [Instruction[], bigint][] = [
    [[], 5_000n],
    [
      [
        getSetComputeUnitLimitInstruction({ units: 10_000 }),
        getSetComputeUnitPriceInstruction({ microLamports: 1_000_000n }),
      ],
      15_000n,
    ],
    // No explicit limit: two builtin instructions at 3,000 units each, price 3 lamports per 1,000 units.
    [[getSetComputeUnitPriceInstruction({ microLamports: 3_000n })], 5_018n],
  ];
  for (const [budget, expectedFee] of cases) {
    const before = ledger.getBalance(key(payer.address));
    const tx = await signed(ledger, payer, [
      ...budget,
      getTransferSolInstruction({ source: payer, destination: to, amount: lamports(SOL) }),
    ]);
    const outcome = ledger.submit(tx, { preflight: true });
    assert.equal(outcome.kind, 'landed');
    assert.equal(outcome.kind === 'landed' && outcome.record.fee, expectedFee);
    assert.equal(before - ledger.getBalance(key(payer.address)), SOL + expectedFee);
  }
});

test('a durable-nonce transaction lands long after any blockhash expired, once', async () => {
  const { clock, ledger } = setup();
  const payer = await funded(ledger);
  const nonceAccount = await generateKeyPairSigner();
  const create = await signed(ledger, payer, [
    getCreateAccountInstruction({
      payer,
      newAccount: nonceAccount,
      lamports: ledger.minimumBalanceForRentExemption(80),
      space: 80,
      programAddress: SYSTEM_PROGRAM_ADDRESS,
    }),
    getInitializeNonceAccountInstruction({
      nonceAccount: nonceAccount.address,
      nonceAuthority: payer.address,
    }),
  ]);
  assert.equal(ledger.submit(create, { preflight: true }).kind, 'landed');
  const nonceData = ledger.getAccount(key(nonceAccount.address))?.data;
  assert.ok(nonceData);
  const nonce = encodeBase58(nonceData.subarray(40, 72)) as Nonce;
  const to = (await generateKeyPairSigner()).address;
  const tx = await pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) =>
      setTransactionMessageLifetimeUsingDurableNonce(
        { nonce, nonceAccountAddress: nonceAccount.address, nonceAuthorityAddress: payer.address },
        m,
      ),
    (m) =>
      appendTransactionMessageInstructions(
        [getTransferSolInstruction({ source: payer, destination: to, amount: lamports(SOL) })],
        m,
      ),
    (m) => signTransactionMessageWithSigners(m),
  );
  const bytes = new Uint8Array(getTransactionEncoder().encode(tx));
  clock.advance(1000 * 400);
  assert.equal(ledger.submit(bytes, { preflight: true }).kind, 'landed');
  assert.equal(ledger.getBalance(key(to)), SOL);
  const again = ledger.submit(bytes, { preflight: true });
  assert.equal(again.kind, 'rejected');
  assert.equal(ledger.getBalance(key(to)), SOL);
});

test('SlotHashes lists the recent slots newest first with their blockhashes, also after time travel', () => {
  const { clock, ledger } = setup();
  const slotHashes = () => {
    const data = Buffer.from(
      ledger.getAccount(key('SysvarS1otHashes111111111111111111111111111'))?.data ?? [],
    );
    return Array.from({ length: Number(data.readBigUInt64LE(0)) }, (_, i) => [
      Number(data.readBigUInt64LE(8 + i * 40)),
      encodeBase58(data.subarray(16 + i * 40, 48 + i * 40)),
    ]);
  };
  clock.advance(3 * 400);
  assert.deepEqual(
    slotHashes(),
    [3, 2, 1, 0].map((slot) => [slot, ledger.block(slot).blockhash]),
  );
  assert.equal(ledger.block(3).blockhash, ledger.latestBlockhash().blockhash);
  ledger.timeTravel({ absoluteSlot: 10_000 });
  const entries = slotHashes();
  assert.equal(entries.length, 512);
  assert.deepEqual(entries[0], [10_000, ledger.latestBlockhash().blockhash]);
  assert.deepEqual(entries[511], [10_000 - 511, ledger.block(10_000 - 511).blockhash]);
});

test('beyond the record cap the oldest transactions are forgotten, and their blocks with them', async () => {
  const clock = manualClock(new Date('2026-07-01T00:00:00.000Z'));
  const ledger = createLedger({ clock, maxRecordedTransactions: 2 });
  const wallet = key((await generateKeyPairSigner()).address);
  const signatures: string[] = [];
  for (let i = 0; i < 3; i++) {
    signatures.push(ledger.airdrop(wallet, SOL).signature);
    // Past the status cache, so that nothing keeps a record from being forgotten.
    clock.advance(301 * 400);
  }
  assert.equal(ledger.getTransaction(signatures[0] as string), undefined);
  assert.equal(ledger.firstAvailableBlock(), 1);
  assert.deepEqual(ledger.block(0).transactions, []);
  assert.deepEqual(
    ledger.signaturesForAddress(encodeBase58(wallet), { limit: 10 }).map((record) => record.signature),
    [signatures[2], signatures[1]],
  );
  assert.deepEqual(
    ledger.block(301).transactions.map((record) => record.signature),
    [signatures[1]],
  );
});
