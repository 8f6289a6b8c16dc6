import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Address } from '@solana/kit';
import { type Caller, createTestApp, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { deployRoute, quoteRoute, tokenBalance } from '../helpers/route.ts';

const UNLIMITED = { rateLimitMultiplier: 1000 };

describe('the keeper carries routes to their recipients on schedule', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
  });
  after(() => t.close());

  const lamports = async (address: Address) => BigInt(await t.chain.chain.getBalance(address));
  const chainNow = async () => (await t.chain.chain.getClock()).unixTimestamp;
  const travelTo = (unix: bigint) => t.chain.cheats.timeTravel({ absoluteTimestamp: Number(unix) * 1000 });

  for (const [hops, native] of [
    [3, false],
    [10, false],
    [3, true],
    [10, true],
  ] as const) {
    test(`${native ? 'native SOL' : 'SPL token'}, ${hops} hops: every hop on time, the recipient paid exactly, completed`, async () => {
      const mint = native ? (SOL_MINT as Address) : usdc;
      const route = await quoteRoute(t, caller, { hops, mint, arrivalSeconds: 600 });
      const recipientBefore = native
        ? await lamports(route.recipient)
        : await tokenBalance(t, route.recipient, mint);
      // The platform's fees settle into the protocol config and its token account of the mint.
      const config = t.platform.configAddress;
      const earnedLamportsBefore = await lamports(config);
      const earnedTokensBefore = await tokenBalance(t, config, mint);
      const feeWalletBefore = await lamports(t.platform.feeWallet);
      const deployedAt = await chainNow();
      await deployRoute(t, caller, route);

      // Before the first hop is due nothing moves.
      assert.equal(await t.keeper.runOnce(), 0);
      const interval = BigInt(Math.floor(600 / hops));
      const hopTimes: bigint[] = [];
      for (let hop = 1; hop <= hops; hop++) {
        const due = deployedAt + BigInt(hop) * interval;
        await travelTo(due - 1n);
        assert.equal(await t.keeper.runOnce(), 0, `hop ${hop} is not due a second early`);
        await travelTo(due);
        assert.equal(await t.keeper.runOnce(), 1, `hop ${hop} runs when due`);
        hopTimes.push(await chainNow());
        const read = (await caller.get(`/api/v1/transfers/${route.id}`)).json();
        assert.equal(read.progress.hopsCompleted, hop);
        assert.equal(read.signatures.hops.length, hop);
      }
      const done = (await caller.get(`/api/v1/transfers/${route.id}`)).json();
      assert.equal(done.status, 'completed');
      assert.equal(done.phase, 'settled');
      assert.ok(done.completedAt);
      assert.equal(done.recovery.canReclaimRent, true);
      assert.ok(done.recovery.reclaimableLamports > 0);
      assert.ok(
        hopTimes.at(-1)! - deployedAt <= 600n && hopTimes.at(-1)! - deployedAt >= 600n - 10n,
        'arrives on target',
      );

      const net = BigInt(route.estimate.tokens.netDeliveredRaw);
      const received = native
        ? (await lamports(route.recipient)) - recipientBefore
        : (await tokenBalance(t, route.recipient, mint)) - recipientBefore;
      assert.equal(received, net);
      assert.equal(
        (await tokenBalance(t, config, mint)) - earnedTokensBefore,
        BigInt(route.estimate.tokens.feeRaw),
      );
      assert.equal(
        (await lamports(config)) - earnedLamportsBefore,
        BigInt(route.estimate.totalFlatFeeLamports),
      );
      assert.equal(await lamports(t.platform.feeWallet), feeWalletBefore, 'the fee wallet takes no part');

      const events = await t.database.db.query<{ type: string }>(
        'SELECT type FROM events WHERE transfer_id = $1 ORDER BY sequence',
        [route.id],
      );
      const types = events.rows.map((row) => row.type);
      assert.equal(types.filter((type) => type === 'transfer.hop_complete').length, hops);
      assert.deepEqual(types.slice(-3), [
        'transfer.hop_complete',
        'transfer.completed',
        'transfer.phase_changed',
      ]);
    });
  }
});
