// What operators see of rewards: an integration's balances and claims (admin API and CLI), and
// whether the platform's earnings in the protocol config cover what integrators can claim (admin
// API and metric).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, generateKeyPairSigner } from '@solana/kit';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { createRewardClaimWorker } from '../../src/workers/reward-claims.ts';
import { ADMIN_HEADERS, ADMIN_TOKEN, type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { runAdminCli } from '../helpers/process.ts';
import { tokenBalance } from '../helpers/route.ts';
import { settleRoute, sharesOf } from './helpers.ts';

const EARNING = { rateLimitMultiplier: 1000, fees: { flatFeeLamportsPerHop: '1000000' } };

describe('rewards for operators', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  let owedUsdc: bigint;
  before(async () => {
    t = await createTestApp();
    usdc = await createMint(t.chain, { decimals: 6 });
    caller = await t.newCaller('test', EARNING);
    owedUsdc = sharesOf([await settleRoute(t, caller, usdc), await settleRoute(t, caller, usdc)]).byMint.get(
      usdc,
    )!;
  });
  after(() => t.close());

  const admin = async (url: string) => {
    const response = await t.app.inject({ method: 'GET', url, headers: ADMIN_HEADERS });
    assert.equal(response.statusCode, 200, response.body);
    return response.json();
  };

  test('an integration’s rewards per mode, with its latest claims and why one failed; the CLI prints them', async () => {
    const wallet = (await generateKeyPairSigner()).address;
    await caller.post('/api/v1/rewards/wallet', { wallet });
    const held = await tokenBalance(t, t.platform.configAddress, usdc);
    await t.chain.cheats.setTokenAccount(wallet, usdc, { amount: 0n });
    await t.chain.cheats.setTokenAccount(t.platform.configAddress, usdc, { amount: 0n });
    const failed = (await caller.post('/api/v1/rewards/claim', {})).json().claim;
    assert.equal(failed.status, 'failed');
    await t.chain.cheats.setTokenAccount(t.platform.configAddress, usdc, { amount: held });

    const shown = await admin(`/admin/v1/integrations/${caller.integrationId}/rewards`);
    const { lastError, ...claim } = shown.test.claims[0];
    assert.deepEqual(claim, failed);
    assert.match(lastError, /the (chain refused the payout|payout failed on chain)/);
    assert.deepEqual(shown.test.lamports, { accrued: 1_800_000, claimed: 0, claimable: 1_800_000 });
    assert.equal(shown.test.rewardsWallet, wallet);
    assert.equal(shown.test.claimCount, 1);
    assert.deepEqual(shown.live, {
      rewardsWallet: null,
      minimumClaimLamports: 1_000_000,
      lamports: { accrued: 0, claimed: 0, claimable: 0 },
      tokens: [],
      isTestMode: false,
      claims: [],
      claimCount: 0,
    });
    const unknown = await t.app.inject({
      method: 'GET',
      url: '/admin/v1/integrations/999999/rewards',
      headers: ADMIN_HEADERS,
    });
    assert.equal(unknown.statusCode, 404);

    const url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const cli = await runAdminCli([
      'rewards',
      'show',
      String(caller.integrationId),
      '--url',
      url,
      '--token',
      ADMIN_TOKEN,
    ]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.deepEqual(JSON.parse(cli.stdout), shown);
    const coverage = await runAdminCli(['rewards', 'coverage', '--url', url, '--token', ADMIN_TOKEN]);
    assert.equal(coverage.code, 0, coverage.stderr);
    assert.equal(JSON.parse(coverage.stdout).covered, true);
  });

  test('coverage: what is owed against what the config holds above its rent, in the admin API and the rewards_shortfall metric', async () => {
    const registry = new Registry();
    const worker = createRewardClaimWorker({
      db: t.database.db,
      rewards: t.store.rewards,
      chain: t.chain.chain,
      platform: t.platform,
      clock: t.clock,
      metrics: registry,
      log: pino({ level: 'silent' }),
    });
    const shortfall = async () =>
      Object.fromEntries(
        (await registry.getSingleMetric('rewards_shortfall')!.get()).values.map((value) => [
          value.labels.asset,
          value.value,
        ]),
      );

    await worker.runOnce();
    assert.deepEqual(await shortfall(), { lamports: 0, [usdc]: 0 });
    const covered = await admin('/admin/v1/rewards/coverage');
    assert.equal(covered.covered, true);
    assert.deepEqual(covered.assets[1], {
      asset: usdc,
      owed: owedUsdc.toString(),
      held: (await tokenBalance(t, t.platform.configAddress, usdc)).toString(),
      shortfall: '0',
    });
    // What the config holds above its rent-exempt minimum (120 bytes): the fees of settled routes.
    const config = t.platform.configAddress;
    assert.equal(covered.config, config);
    const lamports = BigInt(await t.chain.chain.getBalance(config));
    const reserve = BigInt(await t.chain.chain.getMinimumBalanceForRentExemption(120));
    assert.deepEqual(covered.assets[0], {
      asset: 'lamports',
      owed: '1800000',
      held: (lamports - reserve).toString(),
      shortfall: '0',
    });

    // The config holds less than is owed (the fee key withdrew by hand, outside the service).
    const held = await tokenBalance(t, config, usdc);
    await t.chain.cheats.setAccount(config, { lamports: reserve + 800_000n });
    await t.chain.cheats.setTokenAccount(config, usdc, { amount: owedUsdc - 5n });
    try {
      await worker.runOnce();
      assert.deepEqual(await shortfall(), { lamports: 1_000_000, [usdc]: 5 });
      const short = await admin('/admin/v1/rewards/coverage');
      assert.equal(short.covered, false);
      assert.deepEqual(short.assets, [
        { asset: 'lamports', owed: '1800000', held: '800000', shortfall: '1000000' },
        { asset: usdc, owed: owedUsdc.toString(), held: (owedUsdc - 5n).toString(), shortfall: '5' },
      ]);
    } finally {
      await t.chain.cheats.setAccount(config, { lamports });
      await t.chain.cheats.setTokenAccount(config, usdc, { amount: held });
    }
    await worker.runOnce();
    assert.deepEqual(await shortfall(), { lamports: 0, [usdc]: 0 });
  });
});
