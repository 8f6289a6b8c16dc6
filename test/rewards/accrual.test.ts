// Settled transfers credit the integrator's shares of their fees to the integration's rewards, per
// mode, in the transaction that records the settlement; GET /rewards and GET /usage show them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Address } from '@solana/kit';
import { type Caller, callerFor, createTestApp, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { type Settled, settleRoute, sharesOf, UNLIMITED } from './helpers.ts';

describe('accrual of the integrator’s fee shares', () => {
  let t: TestApp;
  let testCaller: Caller;
  let liveCaller: Caller;
  let usdc: Address;
  let bonk: Address;
  before(async () => {
    t = await createTestApp();
    testCaller = await t.newCaller('test', UNLIMITED);
    liveCaller = callerFor(
      t.app,
      testCaller.integrationId,
      await t.createKey(testCaller.integrationId, 'live'),
    );
    usdc = await createMint(t.chain, { decimals: 6 });
    bonk = await createMint(t.chain, { decimals: 5 });
  });
  after(() => t.close());

  test('SPL and native SOL transfers credit exactly their quoted shares, once each, to their own mode', async () => {
    const settledTest: Settled[] = [];
    for (const [mint, amountRaw] of [
      [usdc, 250_000_000n],
      [usdc, 333_333_333n],
      [bonk, 123_456_789n],
      [SOL_MINT as Address, 2_000_000_000n],
    ] as const)
      settledTest.push(await settleRoute(t, testCaller, mint, { amountRaw }));
    const settledLive = [await settleRoute(t, liveCaller, usdc, { amountRaw: 500_000_000n })];
    // A quote that never settles credits nothing.
    await liveCaller.post('/api/v1/transfers/estimate', { tokenMint: usdc, amountRaw: '1000000', hops: 3 });

    for (const [mode, settled, caller] of [
      ['test', settledTest, testCaller],
      ['live', settledLive, liveCaller],
    ] as const) {
      const owner = { integrationId: testCaller.integrationId, mode };
      const expected = sharesOf(settled);
      const balances = await t.store.rewards.balances(owner);
      assert.ok(expected.lamports > 0n);
      assert.deepEqual(balances, {
        wallet: null,
        lamports: { accrued: expected.lamports, claimed: 0n, claimable: expected.lamports },
        tokens: [...expected.byMint]
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([mint, raw]) => ({ mint, accruedRaw: raw, claimedRaw: 0n, claimableRaw: raw })),
      });
      const read = await caller.get('/api/v1/rewards');
      assert.equal(read.statusCode, 200, read.body);
      assert.deepEqual(read.json(), {
        rewardsWallet: null,
        minimumClaimLamports: 1_000_000,
        lamports: {
          accrued: Number(expected.lamports),
          claimed: 0,
          claimable: Number(expected.lamports),
        },
        tokens: balances.tokens.map((token) => ({
          mint: token.mint,
          accruedRaw: token.accruedRaw.toString(),
          claimedRaw: '0',
          claimableRaw: token.accruedRaw.toString(),
        })),
        isTestMode: mode === 'test',
      });
      const usage = (await caller.get('/api/v1/usage')).json();
      assert.equal(usage.completedTransfers, settled.length);
      assert.equal(usage.totalRevenueLamports, Number(expected.lamports));
      assert.deepEqual(
        usage.revenueByMint,
        Object.fromEntries([...expected.byMint].map(([mint, raw]) => [mint, raw.toString()])),
      );
      const ledger = await t.database.db.query<{ transfer_id: string; amount_raw: string; lamports: string }>(
        `SELECT transfer_id, amount_raw, lamports FROM reward_accruals
          WHERE integration_id = $1 AND mode = $2 ORDER BY transfer_id`,
        [owner.integrationId, mode],
      );
      assert.deepEqual(
        ledger.rows,
        settled.map((transfer) => ({
          transfer_id: String(transfer.id),
          amount_raw: transfer.percentShareRaw.toString(),
          lamports: transfer.flatShareLamports.toString(),
        })),
      );
    }
    // 30% of 1% of 250 USDC, rounded down, and 30% of three hops' 10,000 lamports.
    assert.equal(settledTest[0]!.percentShareRaw, 750_000n);
    assert.equal(settledTest[0]!.flatShareLamports, 9_000n);
  });
});
