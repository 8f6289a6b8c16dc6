// Claims through the HTTP API on the embedded chain: what a claim pays and to whom, checked on
// chain to the lamport and the token base unit; the rules of MH_060 and MH_061; a failed payout;
// test and live modes apart.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, generateKeyPairSigner, type Signature } from '@solana/kit';
import { type Caller, callerFor, createTestApp, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { tokenBalance } from '../helpers/route.ts';
import { type Settled, settleRoute, sharesOf } from './helpers.ts';

/** Flat fees large enough that a few transfers earn more than the minimum claim: 900,000 lamports each. */
const EARNING = { rateLimitMultiplier: 1000, fees: { flatFeeLamportsPerHop: '1000000' } };
const TOKEN_ACCOUNT_RENT = 2_039_280;

describe('reward claims', () => {
  let t: TestApp;
  let usdc: Address;
  let bonk: Address;
  before(async () => {
    t = await createTestApp();
    usdc = await createMint(t.chain, { decimals: 6 });
    bonk = await createMint(t.chain, { decimals: 5 });
  });
  after(() => t.close());

  const lamports = async (address: Address) => BigInt(await t.chain.chain.getBalance(address));
  const networkFee = async (signature: string) =>
    (await t.chain.chain.getTransaction(signature as Signature))!.fee;
  const newWallet = async () => (await generateKeyPairSigner()).address;
  async function setWallet(caller: Caller, wallet: Address) {
    const response = await caller.post('/api/v1/rewards/wallet', { wallet });
    assert.equal(response.statusCode, 200, response.body);
  }
  async function claim(caller: Caller) {
    const response = await caller.post('/api/v1/rewards/claim', {});
    return { status: response.statusCode, body: response.json() };
  }
  /**
   * The balances of everything a claim moves: the platform's earnings (the config's lamports and
   * token accounts), the fee wallet that signs and pays the payout, and the rewards wallet.
   */
  async function balances(wallet: Address, mints: Address[]) {
    const read = async (owner: Address) => ({
      lamports: await lamports(owner),
      tokens: await Promise.all(mints.map((mint) => tokenBalance(t, owner, mint))),
    });
    return {
      platform: await read(t.platform.configAddress),
      feeWallet: await lamports(t.platform.feeWallet),
      wallet: await read(wallet),
    };
  }

  test('without a wallet MH_061 (before MH_060); below the minimum MH_060; nothing is claimed', async () => {
    const caller = await t.newCaller('test', EARNING);
    const noWallet = await claim(caller);
    assert.equal(noWallet.status, 400);
    assert.equal(noWallet.body.error.code, 'MH_061');
    await settleRoute(t, caller, usdc);
    await setWallet(caller, await newWallet());
    const below = await claim(caller);
    assert.equal(below.status, 400);
    assert.equal(below.body.error.code, 'MH_060');
    assert.match(below.body.error.message, /900000 lamports; a claim needs at least 1000000/);
    const read = (await caller.get('/api/v1/rewards')).json();
    assert.deepEqual(read.lamports, { accrued: 900_000, claimed: 0, claimable: 900_000 });
    assert.equal((await caller.get('/api/v1/rewards/claims')).json().pagination.total, 0);
  });

  test('a claim pays exactly what is claimable out of the config, creating the wallet’s missing token account from the lamports; the native share arrives as SOL; the fee wallet pays only the network fee', async () => {
    const caller = await t.newCaller('test', EARNING);
    const settled: Settled[] = [];
    for (const mint of [usdc, bonk, SOL_MINT as Address]) settled.push(await settleRoute(t, caller, mint));
    const shares = sharesOf(settled);
    const wallet = await newWallet();
    // The wallet holds an account of USDC already, none of BONK, and no lamports at all.
    await t.chain.cheats.setTokenAccount(wallet, usdc, { amount: 0n });
    await setWallet(caller, wallet);
    const mints = [usdc, bonk, SOL_MINT as Address];
    const before = await balances(wallet, mints);

    const { status, body } = await claim(caller);
    assert.equal(status, 200, JSON.stringify(body));
    const nativeShare = shares.byMint.get(SOL_MINT as Address)!;
    assert.deepEqual(body, {
      claim: {
        id: body.claim.id,
        status: 'confirmed',
        wallet,
        lamports: Number(shares.lamports),
        rentLamports: TOKEN_ACCOUNT_RENT,
        tokens: [
          { mint: SOL_MINT, amountRaw: nativeShare.toString() },
          ...[usdc, bonk].sort().map((mint) => ({ mint, amountRaw: shares.byMint.get(mint)!.toString() })),
        ],
        signatures: [body.claim.signatures[0]],
        createdAt: body.claim.createdAt,
        confirmedAt: body.claim.confirmedAt,
      },
    });
    assert.equal(shares.lamports, 2_700_000n);

    const after = await balances(wallet, mints);
    const fee = BigInt(await networkFee(body.claim.signatures[0]));
    assert.equal(after.wallet.lamports - before.wallet.lamports, shares.lamports - 2_039_280n + nativeShare);
    assert.equal(before.platform.lamports - after.platform.lamports, shares.lamports);
    assert.equal(
      before.feeWallet - after.feeWallet,
      fee,
      'the fee wallet pays the network fee, nothing else',
    );
    for (const [index, mint] of mints.entries()) {
      const share = shares.byMint.get(mint)!;
      assert.equal(before.platform.tokens[index]! - after.platform.tokens[index]!, share, mint);
      if (mint !== SOL_MINT)
        assert.equal(after.wallet.tokens[index]! - before.wallet.tokens[index]!, share, mint);
    }

    const read = (await caller.get('/api/v1/rewards')).json();
    assert.deepEqual(read.lamports, { accrued: 2_700_000, claimed: 2_700_000, claimable: 0 });
    for (const token of read.tokens) assert.equal(token.claimableRaw, '0');
    const listed = (await caller.get('/api/v1/rewards/claims')).json();
    assert.deepEqual(listed, { items: [body.claim], pagination: { total: 1, limit: 50, offset: 0 } });
    assert.equal((await claim(caller)).body.error.code, 'MH_060', 'nothing is left to claim');
  });

  test('tokens whose missing account the lamports cannot pay for stay claimable; the lamports are paid', async () => {
    const caller = await t.newCaller('test', EARNING);
    const settled = [await settleRoute(t, caller, usdc), await settleRoute(t, caller, usdc)];
    const shares = sharesOf(settled);
    const wallet = await newWallet();
    await setWallet(caller, wallet);
    const { body } = await claim(caller);
    assert.equal(body.claim.status, 'confirmed');
    assert.equal(body.claim.lamports, 1_800_000);
    assert.equal(body.claim.rentLamports, 0);
    assert.deepEqual(body.claim.tokens, []);
    assert.equal(await lamports(wallet), 1_800_000n);
    assert.equal(await tokenBalance(t, wallet, usdc), 0n);
    const read = (await caller.get('/api/v1/rewards')).json();
    assert.deepEqual(read.tokens, [
      {
        mint: usdc,
        accruedRaw: shares.byMint.get(usdc)!.toString(),
        claimedRaw: '0',
        claimableRaw: shares.byMint.get(usdc)!.toString(),
      },
    ]);
  });

  test('a payout that fails on chain leaves the claim failed and its amounts claimable; the next claim pays', async () => {
    const caller = await t.newCaller('test', EARNING);
    const shares = sharesOf([await settleRoute(t, caller, bonk), await settleRoute(t, caller, bonk)]);
    const wallet = await newWallet();
    await t.chain.cheats.setTokenAccount(wallet, bonk, { amount: 0n });
    await setWallet(caller, wallet);
    const held = await tokenBalance(t, t.platform.configAddress, bonk);
    // The platform's BONK account holds less than the integrator's share.
    await t.chain.cheats.setTokenAccount(t.platform.configAddress, bonk, { amount: 1n });
    const failed = await claim(caller);
    assert.equal(failed.status, 200);
    assert.equal(failed.body.claim.status, 'failed');
    assert.equal(failed.body.claim.confirmedAt, null);
    assert.equal(await lamports(wallet), 0n);
    assert.equal(await tokenBalance(t, wallet, bonk), 0n);
    const read = (await caller.get('/api/v1/rewards')).json();
    assert.deepEqual(read.lamports, { accrued: 1_800_000, claimed: 0, claimable: 1_800_000 });
    assert.equal(read.tokens[0].claimableRaw, shares.byMint.get(bonk)!.toString());

    await t.chain.cheats.setTokenAccount(t.platform.configAddress, bonk, { amount: held });
    const paid = await claim(caller);
    assert.equal(paid.body.claim?.status, 'confirmed', JSON.stringify(paid.body));
    assert.equal(await lamports(wallet), 1_800_000n);
    assert.equal(await tokenBalance(t, wallet, bonk), shares.byMint.get(bonk));
    const listed = (await caller.get('/api/v1/rewards/claims')).json();
    assert.deepEqual(
      listed.items.map((item: { status: string }) => item.status),
      ['confirmed', 'failed'],
    );
  });

  test('test and live rewards never mix: each mode has its own balances, wallet and claims', async () => {
    const testCaller = await t.newCaller('test', EARNING);
    const liveCaller = callerFor(
      t.app,
      testCaller.integrationId,
      await t.createKey(testCaller.integrationId, 'live'),
    );
    await settleRoute(t, testCaller, usdc);
    await settleRoute(t, testCaller, usdc);
    await setWallet(testCaller, await newWallet());
    const liveRead = (await liveCaller.get('/api/v1/rewards')).json();
    assert.deepEqual(liveRead, {
      rewardsWallet: null,
      minimumClaimLamports: 1_000_000,
      lamports: { accrued: 0, claimed: 0, claimable: 0 },
      tokens: [],
      isTestMode: false,
    });
    assert.equal((await claim(liveCaller)).body.error.code, 'MH_061');
    await setWallet(liveCaller, await newWallet());
    assert.equal((await claim(liveCaller)).body.error.code, 'MH_060');
    assert.equal((await claim(testCaller)).body.claim.status, 'confirmed');
    assert.equal((await liveCaller.get('/api/v1/rewards/claims')).json().pagination.total, 0);
    assert.equal((await testCaller.get('/api/v1/rewards/claims')).json().pagination.total, 1);
  });
});
