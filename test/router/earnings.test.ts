import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { getTransferSolInstruction } from '@solana-program/system';
import { getCloseAccountInstruction, getTransferInstruction } from '@solana-program/token';
import {
  getUpdateConfigInstruction,
  getWithdrawLamportsInstruction,
  getWithdrawTokensInstruction,
} from '../../src/chain/router/instructions.ts';
import { execute } from './flows.ts';
import {
  createRouteInstruction,
  createRouterEnv,
  deployRoute,
  expectOk,
  expectRouterError,
  prepareEndpoint,
  ROUTER_TARGETS,
  SCREENING_DEPOSIT,
} from './harness.ts';

/*
 * The platform's earnings settle into the protocol config account (flat fees, forfeited deposits)
 * and its token accounts, which only the program moves: no platform key can make a live route's
 * settlement fail, and only the config's platform wallet withdraws them. A source names the
 * largest screening deposit it agrees to.
 */

const CONFIG_RENT = (128n + 120n) * 6960n;

for (const { variant, tokenProgram, label } of ROUTER_TARGETS) {
  describe(`router program ${label}: the platform's earnings`, () => {
    test('no platform key can stop a live route: fee key drained and its accounts gone, config changed', async () => {
      const env = await createRouterEnv(variant, { tokenProgram });
      const { admin, platform, stranger, screener } = env.wallets;
      const fixture = await deployRoute(env, { hopCount: 3, amount: 123_456_789n });
      await execute(env, fixture, 0);

      // Whoever holds the fee key cannot close the account the fees settle into (the config owns
      // it), and empties its own wallet: settlement no longer touches that wallet.
      const closing = await env.send(platform, [
        getCloseAccountInstruction({
          account: env.tokens.platformFee,
          destination: platform.address,
          owner: platform,
        }),
      ]);
      assert.equal(closing.ok, false, 'the fee key cannot close the config’s token account');
      const drained = env.lamports(platform.address) - 5_000n;
      expectOk(
        await env.send(platform, [
          getTransferSolInstruction({ source: platform, destination: stranger.address, amount: drained }),
        ]),
      );
      assert.equal(env.lamports(platform.address), 0n);
      // The admin hands the config to another platform wallet and raises the deposit mid-flight.
      expectOk(
        await env.send(admin, [
          getUpdateConfigInstruction({
            admin,
            config: env.config[0],
            newAdmin: admin.address,
            screeningAuthority: screener.address,
            platformWallet: stranger.address,
            screeningDepositLamports: SCREENING_DEPOSIT * 10n,
          }),
        ]),
      );
      env.track(stranger.address);

      const configLamports = env.lamports(env.config[0]);
      await execute(env, fixture, 1);
      await execute(env, fixture, 2);
      const route = env.route(fixture.routeAddress);
      assert.equal(route.status, 'settled');
      assert.equal(env.tokenBalance(env.tokens.recipient), 122_222_221n);
      assert.equal(env.tokenBalance(env.tokens.platformFee), route.platformFeeTokens);
      assert.equal(env.lamports(env.config[0]), configLamports + route.platformFlatLamports);
      env.assertConserved();
    });

    test('CreateRoute holds at most the deposit the source agreed to', async () => {
      const env = await createRouterEnv(variant, { tokenProgram });
      const { source } = env.wallets;
      const fixture = await prepareEndpoint(env, {
        hopCount: 3,
        screeningRequired: true,
        maxDepositLamports: SCREENING_DEPOSIT - 1n,
      });
      expectRouterError(
        await env.send(source, [createRouteInstruction(env, fixture)]),
        'DepositAboveMaximum',
      );
      // Without screening nothing is held, whatever the ceiling.
      const unscreened = await deployRoute(env, { hopCount: 3, routeId: 2n, maxDepositLamports: 0n });
      assert.equal(env.route(unscreened.routeAddress).depositLamports, 0n);
      // At the ceiling, the config's deposit is held.
      const screened = await deployRoute(env, {
        hopCount: 3,
        routeId: 3n,
        screeningRequired: true,
        maxDepositLamports: SCREENING_DEPOSIT,
      });
      assert.equal(env.route(screened.routeAddress).depositLamports, SCREENING_DEPOSIT);
      env.assertConserved();
    });

    test('only the platform wallet withdraws, lamports above the config’s rent, tokens from its accounts', async () => {
      const env = await createRouterEnv(variant, { tokenProgram });
      const { platform, stranger } = env.wallets;
      const fixture = await deployRoute(env, { hopCount: 3, amount: 123_456_789n });
      for (const step of [0, 1, 2]) await execute(env, fixture, step);
      const route = env.route(fixture.routeAddress);
      const config = env.config[0];
      const earned = env.lamports(config) - CONFIG_RENT;
      assert.equal(earned, route.platformFlatLamports);

      const lamports = (signer: typeof platform, amount: bigint) =>
        env.send(signer, [
          getWithdrawLamportsInstruction({
            platformWallet: signer,
            config,
            destination: signer.address,
            amount,
          }),
        ]);
      expectRouterError(await lamports(stranger, 1n), 'NotPlatformWallet');
      expectRouterError(await lamports(platform, earned + 1n), 'WithdrawalTooLarge');
      const before = env.lamports(platform.address);
      expectOk(await lamports(platform, earned));
      assert.equal(env.lamports(config), CONFIG_RENT);
      assert.equal(env.lamports(platform.address), before + earned - 5_000n);

      const tokens = (signer: typeof platform, vault = env.tokens.platformFee) =>
        env.send(signer, [
          getWithdrawTokensInstruction({
            platformWallet: signer,
            config,
            vault,
            destination: env.tokens.integratorFee,
            amount: route.platformFeeTokens,
          }),
        ]);
      expectRouterError(await tokens(stranger), 'NotPlatformWallet');
      // Only token accounts the config owns: not the integrator's, even signed by the platform.
      expectRouterError(await tokens(platform, env.tokens.source), 'InvalidFeeAccount');
      const integratorTokens = env.tokenBalance(env.tokens.integratorFee);
      expectOk(await tokens(platform));
      assert.equal(env.tokenBalance(env.tokens.platformFee), 0n);
      assert.equal(env.tokenBalance(env.tokens.integratorFee), integratorTokens + route.platformFeeTokens);
      // Nor can the fee key move them with a plain token transfer: the config owns the account.
      const direct = await env.send(platform, [
        getTransferInstruction({
          source: env.tokens.platformFee,
          destination: env.tokens.integratorFee,
          authority: platform,
          amount: 1n,
        }),
      ]);
      assert.equal(direct.ok, false, 'a plain transfer out of the config’s account is refused');
      env.assertConserved();
    });
  });
}
