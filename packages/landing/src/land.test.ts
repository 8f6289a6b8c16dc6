import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TransactionError } from '@solana/kit';
import { type LandingRpc, type LandingStatus, landTransaction, type SendAnswer } from './land.ts';

/*
 * The policy against a node scripted in memory: what it answers each send, the statuses it
 * reports in turn, its block height. The chain tests (test/chain/landing.test.ts, test/client/)
 * run the same policy against the embedded chain.
 */

const transaction = { base64: 'AQID', signature: 'sig', validUntil: 100n };
const confirmed: LandingStatus = { err: null, confirmationStatus: 'confirmed' };
const processed: LandingStatus = { err: null, confirmationStatus: 'processed' };

class Weather extends Error {}

/** A node answering each send with the next of `sends` (the last one after), each status read likewise. */
function scriptedNode(script: {
  sends: (SendAnswer<string> | Error)[];
  statuses: (LandingStatus | null | Error)[];
  blockHeight?: () => bigint;
}) {
  const calls = { sends: 0, statuses: 0, historySearches: 0 };
  const next = <T>(list: T[], index: number) => list[Math.min(index, list.length - 1)] as T;
  const rpc: LandingRpc<string> = {
    async sendTransaction(base64) {
      assert.equal(base64, transaction.base64, 'the same bytes');
      const answer = next(script.sends, calls.sends++);
      if (answer instanceof Error) throw answer;
      return answer;
    },
    async getSignatureStatus(_signature, options) {
      if (options.searchTransactionHistory) calls.historySearches += 1;
      const answer = next(script.statuses, calls.statuses++);
      if (answer instanceof Error) throw answer;
      return answer;
    },
    getBlockHeight: async () => script.blockHeight?.() ?? 50n,
    isWeather: (error) => error instanceof Weather,
  };
  return { rpc, calls };
}

/** Each read of the clock moves it a second on: a re-send is due at every other poll. */
function tickingClock() {
  let ms = 0;
  return () => (ms += 1_000);
}

test('landed once confirmed; a transaction that landed and failed is its error', async () => {
  const error = { InstructionError: [1, { Custom: 6 }] } as unknown as TransactionError;
  const landed = scriptedNode({ sends: ['sent'], statuses: [null, processed, confirmed] });
  assert.deepEqual(await landTransaction(landed.rpc, transaction, { pollMs: 0 }), { kind: 'landed' });
  assert.equal(landed.calls.statuses, 3);
  const failed = scriptedNode({
    sends: ['sent'],
    statuses: [{ err: error, confirmationStatus: 'confirmed' }],
  });
  assert.deepEqual(await landTransaction(failed.rpc, transaction, { pollMs: 0 }), { kind: 'failed', error });
});

test('asked for finalized, a confirmed transaction is waited for until finalized', async () => {
  const { rpc, calls } = scriptedNode({
    sends: ['sent'],
    statuses: [confirmed, confirmed, { err: null, confirmationStatus: 'finalized' }],
  });
  const outcome = await landTransaction(rpc, transaction, { pollMs: 0, commitment: 'finalized' });
  assert.deepEqual(outcome, { kind: 'landed' });
  assert.equal(calls.statuses, 3);
});

test('a first send refused in preflight is the verdict unless the node has the transaction; one whose blockhash it does not know yet is not', async () => {
  const refused = scriptedNode({ sends: [{ refused: 'insufficient funds' }], statuses: [null, confirmed] });
  assert.deepEqual(await landTransaction(refused.rpc, transaction, { pollMs: 0 }), {
    kind: 'refused',
    refusal: 'insufficient funds',
  });
  assert.equal(refused.calls.statuses, 1, 'nothing was charged: the node knows no such transaction');
  // Refused because an earlier attempt of this send, whose answer was lost, ran it already.
  const ranAlready = scriptedNode({ sends: [{ refused: 'account already in use' }], statuses: [confirmed] });
  assert.deepEqual(await landTransaction(ranAlready.rpc, transaction, { pollMs: 0 }), { kind: 'landed' });
  // A node behind the one that gave the blockhash: sent again, it lands.
  const lagging = scriptedNode({ sends: ['blockhash_not_found', 'sent'], statuses: [null, null, confirmed] });
  const outcome = await landTransaction(lagging.rpc, transaction, { pollMs: 0, now: tickingClock() });
  assert.deepEqual(outcome, { kind: 'landed' });
  assert.ok(lagging.calls.sends >= 2);
});

test('a re-send meeting weather is tried again at the next interval; any other failure ends the landing', async () => {
  const weather = scriptedNode({
    sends: ['sent', new Weather('429'), 'sent'],
    statuses: [null, null, null, confirmed],
  });
  const landed = await landTransaction(weather.rpc, transaction, { pollMs: 0, now: tickingClock() });
  assert.deepEqual(landed, { kind: 'landed' });
  assert.ok(weather.calls.sends >= 2);
  const broken = scriptedNode({ sends: ['sent', new Error('invalid params')], statuses: [null] });
  await assert.rejects(
    landTransaction(broken.rpc, transaction, { pollMs: 0, now: tickingClock() }),
    /invalid params/,
  );
});

test('expired only once past its last valid block height and the history does not have it', async () => {
  // The status read after the height passed searches the history: it landed in its last valid block.
  const late = scriptedNode({ sends: ['sent'], statuses: [null, confirmed], blockHeight: () => 101n });
  assert.deepEqual(await landTransaction(late.rpc, transaction, { pollMs: 0 }), { kind: 'landed' });
  assert.equal(late.calls.historySearches, 1);
  const gone = scriptedNode({ sends: ['sent'], statuses: [null], blockHeight: () => 101n });
  assert.deepEqual(await landTransaction(gone.rpc, transaction, { pollMs: 0 }), { kind: 'expired' });
  assert.equal(gone.calls.historySearches, 1, 'given up only after a last look in the history');
  // Still valid: not expired, however long the node does not know it.
  const valid = scriptedNode({
    sends: ['sent'],
    statuses: [null, null, null, confirmed],
    blockHeight: () => 100n,
  });
  assert.deepEqual(await landTransaction(valid.rpc, transaction, { pollMs: 0 }), { kind: 'landed' });
  assert.equal(valid.calls.historySearches, 0);
});

test("a status read spoiled by the node's weather is a look missed; five in a row end the landing with it", async () => {
  const throttled = new Weather('429 Too Many Requests');
  const spoiled = scriptedNode({
    sends: ['sent'],
    statuses: [null, throttled, throttled, throttled, throttled, confirmed],
  });
  assert.deepEqual(await landTransaction(spoiled.rpc, transaction, { pollMs: 0 }), { kind: 'landed' });
  const down = scriptedNode({ sends: ['sent'], statuses: [null, throttled] });
  await assert.rejects(landTransaction(down.rpc, transaction, { pollMs: 0 }), throttled);
  assert.equal(down.calls.statuses, 6, 'the first look, then five spoiled');
  const broken = new Error('not weather');
  const refused = scriptedNode({ sends: ['sent'], statuses: [null, broken] });
  await assert.rejects(landTransaction(refused.rpc, transaction, { pollMs: 0 }), broken);
  assert.equal(refused.calls.statuses, 2, 'anything else ends it at once');
});
