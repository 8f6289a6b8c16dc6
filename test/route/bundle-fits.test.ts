// Every bundle prepare hands out fits a transaction and lands, whatever the chain already holds:
// 3 to 10 hops, SPL or native SOL, the keeper funded by an earlier broadcast or not, the
// platform's fee account and the recipient's token account present or missing. Each transaction
// is signed as a wallet signs it and sent with preflight (the chain simulates it first).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, getBase64EncodedWireTransaction, getBase64Encoder } from '@solana/kit';
import fc from 'fast-check';
import { TRANSACTION_SIZE_LIMIT } from '../../src/chain/transactions.ts';
import { type Caller, createTestApp, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { quoteRoute } from '../helpers/route.ts';
import { type Bundle, broadcastBundle, signAsWallet } from '../helpers/wallet.ts';
import { confirmBroadcast, prepare, UNLIMITED } from './helpers.ts';

describe('prepared bundles fit and land in every combination', () => {
  let t: TestApp;
  let caller: Caller;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', UNLIMITED);
  });
  after(() => t.close());

  /** The size of every transaction of a bundle once the wallet signed it. */
  async function signedSizes(bundle: Bundle, wallet: Parameters<typeof signAsWallet>[0]) {
    const wires = [
      bundle.keeperFundingTx,
      ...bundle.routeInitTxs.map((tx) => tx.base64),
      bundle.orchestratorInitTx,
      ...bundle.sessionInitTxs,
    ].flatMap((wire) => (wire ? [wire] : []));
    return Promise.all(
      wires.map(
        async (wire) =>
          getBase64Encoder().encode(getBase64EncodedWireTransaction(await signAsWallet(wallet, wire))).length,
      ),
    );
  }

  test('any hop count, mint, keeper funding, fee account and recipient account', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          hops: fc.integer({ min: 3, max: 10 }),
          native: fc.boolean(),
          keeperFundedBefore: fc.boolean(),
          feeAccountExists: fc.boolean(),
          recipientAccountExists: fc.boolean(),
        }),
        async (c) => {
          const mint = c.native ? (SOL_MINT as Address) : await createMint(t.chain, { decimals: 6 });
          if (!c.native && c.feeAccountExists) {
            await t.chain.cheats.setTokenAccount(t.platform.configAddress, mint, { amount: 0n });
          }
          const route = await quoteRoute(t, caller, { hops: c.hops, mint, arrivalSeconds: 15 * c.hops + 60 });
          if (!c.native && c.recipientAccountExists) {
            await t.chain.cheats.setTokenAccount(route.recipient, mint, { amount: 0n });
          }
          let keeperFundingSignature: string | undefined;
          if (c.keeperFundedBefore) {
            const first = (await prepare(caller, route.id)).preparedTxs;
            const sent = await broadcastBundle(t.chain.chain, route.source, first, {
              through: 'keeperFunding',
            });
            keeperFundingSignature = sent.keeperFundingSignature;
            const recorded = await confirmBroadcast(caller, route.id, {
              keeperFundingSignature,
              routeInitSignatures: [],
            });
            assert.equal(recorded.statusCode, 200, recorded.body);
          }
          const bundle = (await prepare(caller, route.id)).preparedTxs;
          assert.equal(bundle.keeperFundingTx === null, c.keeperFundedBefore);
          for (const size of await signedSizes(bundle, route.source)) {
            assert.ok(size <= TRANSACTION_SIZE_LIMIT, `${JSON.stringify(c)}: a transaction of ${size} bytes`);
          }
          const sent = await broadcastBundle(t.chain.chain, route.source, bundle);
          const confirmed = await confirmBroadcast(caller, route.id, {
            ...sent,
            ...(keeperFundingSignature && !sent.keeperFundingSignature ? { keeperFundingSignature } : {}),
          });
          assert.equal(confirmed.statusCode, 200, confirmed.body);
          assert.equal(confirmed.json().transfer.status, 'processing', JSON.stringify(c));
        },
      ),
      { numRuns: 40 },
    );
  });
});
