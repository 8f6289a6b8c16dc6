// A wallet built on @solana/web3.js 1.x against the local endpoint, used the way such wallets use
// it: an http + WebSocket Connection, transactions sent raw and confirmed with the blockhash
// strategy, versioned transactions deserialized and signed, an address lookup table created,
// extended and used, and the history, block and subscription methods wallets and explorers read.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  AddressLookupTableProgram,
  Connection,
  type Context,
  type KeyedAccountInfo,
  Keypair,
  type Logs,
  type PublicKey,
  SystemProgram,
  sendAndConfirmTransaction,
  Transaction,
  type TransactionInstruction,
  TransactionMessage,
  type VersionedAccountsModeBlockResponse,
  VersionedTransaction,
} from '@solana/web3.js';
import { type LocalChain, startLocalChain } from '../src/index.ts';
import { manualClock, slotsMs } from '../src/testing.ts';
import { closeConnection } from './helpers.ts';

const SOL = 1_000_000_000;
const SYSTEM = SystemProgram.programId.toBase58();
const clock = manualClock(new Date('2026-08-01T00:00:00Z'));
const payer = Keypair.generate();
let local: LocalChain;
let connection: Connection;
let funding: string;

before(async () => {
  local = await startLocalChain({ rpcPort: 0, clock, autoTick: false });
  connection = new Connection(local.rpcUrl as string, { commitment: 'confirmed', wsEndpoint: local.wsUrl });
  clock.advance(slotsMs(3));
  funding = await connection.requestAirdrop(payer.publicKey, 10 * SOL);
  await connection.confirmTransaction({ signature: funding, ...(await connection.getLatestBlockhash()) });
});

after(async () => {
  await closeConnection(connection);
  await local.close();
});

/** Signs and sends a v0 transaction as a wallet does with one an app hands it serialized and unsigned. */
async function sendVersioned(
  instructions: TransactionInstruction[],
  tables: Parameters<TransactionMessage['compileToV0Message']>[0] = [],
): Promise<string> {
  const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash();
  const message = new TransactionMessage({
    payerKey: payer.publicKey,
    recentBlockhash: blockhash,
    instructions,
  });
  const unsigned = new VersionedTransaction(message.compileToV0Message(tables)).serialize();
  const transaction = VersionedTransaction.deserialize(unsigned);
  transaction.sign([payer]);
  const signature = await connection.sendRawTransaction(transaction.serialize());
  const { value } = await connection.confirmTransaction({ signature, blockhash, lastValidBlockHeight });
  assert.equal(value.err, null);
  return signature;
}

/** Collects what a subscription notifies; `find` waits for the first value that matches. */
function notifications<T>() {
  const values: T[] = [];
  const waiting: { matches: (value: T) => boolean; resolve: (value: T) => void }[] = [];
  return {
    callback(value: T, _context: Context) {
      values.push(value);
      for (const waiter of waiting.filter((w) => w.matches(value))) waiter.resolve(value);
    },
    find(matches: (value: T) => boolean): Promise<T> {
      const found = values.find(matches);
      return found ? Promise.resolve(found) : new Promise((resolve) => waiting.push({ matches, resolve }));
    },
  };
}

test('a legacy transfer confirms over WebSocket and shows in logs, program notifications, history and blocks', async () => {
  const recipient = Keypair.generate().publicKey;
  const payerLogs = notifications<Logs>();
  const allLogs = notifications<Logs>();
  const systemAccounts = notifications<KeyedAccountInfo>();
  const subscriptions = [
    connection.onLogs(payer.publicKey, payerLogs.callback),
    connection.onLogs('all', allLogs.callback),
    connection.onProgramAccountChange(SystemProgram.programId, systemAccounts.callback, {
      commitment: 'confirmed',
      filters: [{ dataSize: 0 }],
    }),
  ];
  // Confirming another transaction over the same socket puts the subscriptions in place first.
  const warmUp = await connection.requestAirdrop(Keypair.generate().publicKey, SOL);
  await connection.confirmTransaction({ signature: warmUp, ...(await connection.getLatestBlockhash()) });

  const transfer = new Transaction().add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: recipient, lamports: 2 * SOL }),
  );
  const signature = await sendAndConfirmTransaction(connection, transfer, [payer]);
  assert.equal(await connection.getBalance(recipient), 2 * SOL);
  const logLines = [`Program ${SYSTEM} invoke [1]`, `Program ${SYSTEM} success`];
  assert.deepEqual(await payerLogs.find((l) => l.signature === signature), {
    signature,
    err: null,
    logs: logLines,
  });
  assert.deepEqual(await allLogs.find((l) => l.signature === signature), {
    signature,
    err: null,
    logs: logLines,
  });
  const credited = await systemAccounts.find((a) => a.accountId.equals(recipient));
  assert.equal(credited.accountInfo.lamports, 2 * SOL);
  assert.ok(credited.accountInfo.owner.equals(SystemProgram.programId));
  assert.equal(credited.accountInfo.data.length, 0);
  await connection.removeOnLogsListener(subscriptions[0] as number);
  await connection.removeOnLogsListener(subscriptions[1] as number);
  await connection.removeProgramAccountChangeListener(subscriptions[2] as number);

  const parsed = await connection.getParsedTransaction(signature, { maxSupportedTransactionVersion: 0 });
  assert.ok(parsed?.meta && parsed.blockTime);
  assert.equal(parsed.version, 'legacy');
  assert.equal(parsed.meta.fee, 5000);
  assert.deepEqual(parsed.meta.postBalances.slice(1, 2), [2 * SOL]);
  assert.deepEqual(
    parsed.transaction.message.accountKeys.map((k) => [k.pubkey.toBase58(), k.signer, k.writable]),
    [
      [payer.publicKey.toBase58(), true, true],
      [recipient.toBase58(), false, true],
      [SYSTEM, false, false],
    ],
  );
  const { slot, blockTime } = parsed;

  // History, newest first, with the airdrop's memo; limit, before and until page through it.
  const history = await connection.getSignaturesForAddress(payer.publicKey);
  assert.deepEqual(
    history.map((h) => [h.signature, h.err, h.confirmationStatus]),
    [
      [signature, null, 'finalized'],
      [funding, null, 'finalized'],
    ],
  );
  assert.equal(history[0]?.memo, null);
  assert.match(history[1]?.memo ?? '', /^\[\d+\] airdrop \d+$/);
  assert.deepEqual([history[0]?.slot, history[0]?.blockTime], [slot, blockTime]);
  const page = async (options: object) =>
    (await connection.getSignaturesForAddress(payer.publicKey, options)).map((h) => h.signature);
  assert.deepEqual(await page({ limit: 1 }), [signature]);
  assert.deepEqual(await page({ before: signature }), [funding]);
  assert.deepEqual(await page({ until: funding }), [signature]);

  // The block holds the transaction, linked to its parent.
  const block = await connection.getBlock(slot, { maxSupportedTransactionVersion: 0 });
  const parent = await connection.getBlock(slot - 1, { maxSupportedTransactionVersion: 0 });
  assert.ok(block && parent);
  assert.deepEqual(
    [block.blockTime, block.parentSlot, block.previousBlockhash],
    [blockTime, slot - 1, parent.blockhash],
  );
  // The clock did not move: the funding airdrop, the warm-up and the transfer share one slot.
  const inBlock = [funding, warmUp, signature];
  assert.deepEqual(
    block.transactions.map((t) => t.transaction.signatures[0]),
    inBlock,
  );
  assert.deepEqual(block.rewards, []);
  const signatures = await connection.getBlockSignatures(slot);
  assert.deepEqual(signatures.signatures, inBlock);
  assert.equal(signatures.blockhash, block.blockhash);
  // web3.js's overloads type this as a full block; the answer is the accounts-only shape.
  const accounts = (await connection.getBlock(slot, {
    transactionDetails: 'accounts',
    maxSupportedTransactionVersion: 0,
  })) as unknown as VersionedAccountsModeBlockResponse;
  assert.deepEqual(
    accounts?.transactions[2]?.transaction.accountKeys.map((k) => k.pubkey.toBase58()),
    [payer.publicKey.toBase58(), recipient.toBase58(), SYSTEM],
  );
  assert.equal(accounts?.transactions[2]?.meta?.fee, 5000);
  const bare = await connection.getBlock(slot, { transactionDetails: 'none', rewards: false });
  assert.deepEqual(bare, {
    blockHeight: slot,
    blockTime,
    blockhash: block.blockhash,
    parentSlot: slot - 1,
    previousBlockhash: parent.blockhash,
  });
  assert.equal(await connection.getBlockTime(slot), blockTime);
  assert.deepEqual(await connection.getBlocks(slot - 2, slot), [slot - 2, slot - 1, slot]);
});

test('an address lookup table is created, extended, read back and used by a v0 transaction', async () => {
  const recipients = [Keypair.generate().publicKey, Keypair.generate().publicKey];
  const [create, table] = AddressLookupTableProgram.createLookupTable({
    authority: payer.publicKey,
    payer: payer.publicKey,
    recentSlot: await connection.getSlot(),
  });
  const extend = AddressLookupTableProgram.extendLookupTable({
    authority: payer.publicKey,
    payer: payer.publicKey,
    lookupTable: table,
    addresses: recipients,
  });
  await sendVersioned([create, extend]);
  // Addresses added to a table are usable from the next slot on.
  clock.advance(slotsMs(1));
  const lookup = (await connection.getAddressLookupTable(table)).value;
  assert.ok(lookup);
  assert.deepEqual(
    lookup.state.addresses.map((a: PublicKey) => a.toBase58()),
    recipients.map((r) => r.toBase58()),
  );

  const signature = await sendVersioned(
    [
      SystemProgram.transfer({
        fromPubkey: payer.publicKey,
        toPubkey: recipients[1] as PublicKey,
        lamports: SOL,
      }),
    ],
    [lookup],
  );
  assert.equal(await connection.getBalance(recipients[1] as PublicKey), SOL);
  const landed = await connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 });
  assert.equal(landed?.version, 0);
  assert.deepEqual(
    landed?.meta?.loadedAddresses?.writable.map((a) => a.toBase58()),
    [(recipients[1] as PublicKey).toBase58()],
  );
  assert.deepEqual(
    landed?.transaction.message.addressTableLookups.map((l) => [l.accountKey.toBase58(), l.writableIndexes]),
    [[table.toBase58(), [1]]],
  );
  // A client that does not say it reads v0 transactions gets the validator's refusal.
  await assert.rejects(connection.getBlock(landed?.slot as number), /maxSupportedTransactionVersion/);
});
