// The landing engine against the local chain, its sends and statuses scripted: the same bytes sent
// again until they land, landed only once confirmed, given up only once expired, and a refusal of
// bytes that may have been sent before taken as no verdict.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  type KeyPairSigner,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type TransactionError,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { ChainError } from '../../src/chain/errors.ts';
import { landTransaction, type SignedTransaction } from '../../src/chain/landing.ts';
import type { Chain } from '../../src/chain/types.ts';
import { startTestChain, type TestChain } from '../helpers/chain.ts';

let local: TestChain;
let payer: KeyPairSigner;

before(async () => {
  local = await startTestChain();
  payer = await generateKeyPairSigner();
  await local.cheats.setAccount(payer.address, { lamports: 10_000_000_000n });
});
after(() => local.close());

/** A signed transfer of `lamports` from the payer to a fresh wallet, and that wallet. */
async function signedTransfer(lamports = 1_000_000n) {
  const to = await generateKeyPairSigner();
  const lifetime = await local.chain.getLatestBlockhash();
  const transaction = await pipe(
    createTransactionMessage({ version: 0 }),
    (message) => setTransactionMessageFeePayerSigner(payer, message),
    (message) => setTransactionMessageLifetimeUsingBlockhash(lifetime, message),
    (message) =>
      appendTransactionMessageInstructions(
        [getTransferSolInstruction({ source: payer, destination: to.address, amount: lamports })],
        message,
      ),
    (message) => signTransactionMessageWithSigners(message),
  );
  const signed: SignedTransaction = {
    base64: getBase64EncodedWireTransaction(transaction),
    signature: getSignatureFromTransaction(transaction),
    validUntil: lifetime.lastValidBlockHeight,
  };
  return { signed, to: to.address };
}

/** A clock the test moves by hand. */
function manualClock() {
  let ms = 0;
  return { now: () => ms, advance: (by: number) => (ms += by) };
}

test('bytes a node dropped or throttled are sent again, the same ones, every resend interval until they land', async () => {
  const { signed, to } = await signedTransfer();
  const sends: string[] = [];
  const clock = manualClock();
  const chain: Chain = {
    ...local.chain,
    async sendTransaction(wire, options) {
      sends.push(String(wire));
      clock.advance(1_000);
      if (sends.length === 1) return signed.signature as never;
      // Then a node throttling: a re-send it refuses is tried again at the next interval.
      if (sends.length === 2) throw new ChainError('CHAIN_RATE_LIMITED', 'rate limited');
      return local.chain.sendTransaction(wire, options);
    },
    async getSignatureStatuses(signatures, options) {
      clock.advance(500);
      return local.chain.getSignatureStatuses(signatures, options);
    },
  };
  assert.equal(await landTransaction(chain, signed, { now: clock.now, pollMs: 1 }), null);
  assert.deepEqual(new Set(sends), new Set([signed.base64]), 'the same bytes each time');
  assert.ok(sends.length >= 3);
  assert.equal(await local.chain.getBalance(to), 1_000_000n);
});

test('a transaction shown processed is waited for until confirmed', async () => {
  const { signed } = await signedTransfer();
  let reads = 0;
  const chain: Chain = {
    ...local.chain,
    async getSignatureStatuses(signatures, options) {
      const statuses = await local.chain.getSignatureStatuses(signatures, options);
      reads += 1;
      return reads < 4
        ? statuses.map((status) => status && { ...status, confirmationStatus: 'processed' as const })
        : statuses;
    },
  };
  assert.equal(await landTransaction(chain, signed, { now: Date.now, pollMs: 1 }), null);
  assert.ok(reads >= 4, 'not landed at a processed status');
});

test('bytes that never reach a leader expire once their last valid block height passed', async () => {
  const { signed } = await signedTransfer();
  const chain: Chain = {
    ...local.chain,
    sendTransaction: async () => signed.signature as never,
    getBlockHeight: async () => signed.validUntil + 1n,
  };
  assert.equal(await landTransaction(chain, signed, { now: Date.now, pollMs: 1 }), 'expired');
});

test('a refused first send is the verdict, unless the node has the bytes already', async () => {
  const transactionError = { InstructionError: [0, { Custom: 1 }] } as unknown as TransactionError;
  const chain: Chain = {
    ...local.chain,
    async sendTransaction() {
      throw new ChainError('CHAIN_PREFLIGHT_FAILED', 'simulation failed', {
        context: { transactionError, logs: [] },
      });
    },
  };
  const never = await signedTransfer();
  assert.deepEqual(
    await landTransaction(chain, never.signed, { now: Date.now, pollMs: 1 }),
    transactionError,
  );
  assert.equal(await local.chain.getBalance(never.to), 0n, 'nothing ran');
  // Sent before (by a process that died, or by an attempt of this send whose answer was lost) and
  // landed; a node now refuses the bytes in preflight.
  const { signed, to } = await signedTransfer();
  await local.chain.sendTransaction(signed.base64 as never);
  assert.equal(await landTransaction(chain, signed, { now: Date.now, pollMs: 1 }), null);
  assert.equal(await landTransaction(chain, signed, { now: Date.now, pollMs: 1, resumed: true }), null);
  assert.equal(await local.chain.getBalance(to), 1_000_000n, 'landed once');
});
