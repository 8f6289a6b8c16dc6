import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AccountRole, type Address, type Instruction, lamports } from '@solana/kit';
import { getTokenDecoder } from '@solana-program/token';
import { createSolCostEstimator } from '../../src/chain/quote-reads.ts';
import { NATIVE_MINT_ADDRESS, stepReleaseAt } from '../../src/chain/router/accounts.ts';
import {
  getExecuteStepInstruction,
  getInitStepsInstruction,
  getMarkFailedInstruction,
} from '../../src/chain/router/instructions.ts';
import { computeRecovery } from '../../src/chain/router/recovery.ts';
import { assertFullyRecovered, execute, executeStep, recover, snapshot, stepAccounts } from './flows.ts';
import {
  createRouteInstruction,
  createRouterEnv,
  deployRoute,
  expectOk,
  expectRouterError,
  planFixtureDeployment,
  prepareEndpoint,
  ROUTER_TARGETS,
  type RouteFixture,
  type RouterEnv,
  readStep,
  SOURCE_TOKENS,
} from './harness.ts';
import { decodeExecuteStepReturn } from './returns.ts';

/*
 * Routes on the native mint: the source's SOL travels wrapped, hop by hop like any SPL token, and
 * the last step unwraps it into the recipient's wallet, exact to the lamport, with no token account
 * of the recipient anywhere.
 */

const rent = (env: RouterEnv, bytes: number) => env.svm.minimumBalanceForRentExemption(BigInt(bytes));
const TOKEN_ACCOUNT_BYTES = 165;

/** Lamports of the wallets a route pays, and the source's fees so far (wrapping its SOL cost one). */
function balances(env: RouterEnv) {
  const { source, integrator } = env.wallets;
  return {
    source: env.lamports(source.address),
    platform: env.lamports(env.config[0]),
    integrator: env.lamports(integrator.address),
    fees: env.fees(source.address),
  };
}

/**
 * Runs every step when due: wrapped SOL moves between the route's token accounts, and the last step
 * closes the last intermediate account and pays the recipient's wallet exactly the net amount.
 */
async function executeAll(env: RouterEnv, fixture: RouteFixture, net: bigint, feeTokens: bigint) {
  const { holders, terms } = fixture;
  const recipient = env.wallets.recipient.address;
  for (let i = 0; i < terms.hopCount; i++) {
    const last = i === terms.hopCount - 1;
    const recipientLamports = env.lamports(recipient);
    env.setTime(stepReleaseAt(env.route(fixture.routeAddress), i));
    const result = expectOk(await executeStep(env, fixture, i));
    assert.deepEqual(decodeExecuteStepReturn(result.returnData), { index: i, amount: net, settled: last });
    if (last) {
      assert.equal(env.lamports(recipient), recipientLamports + net, 'the wallet got the net amount');
      assert.equal(env.exists(holders[i]!), false, 'the last intermediate account was closed');
    } else {
      assert.equal(env.lamports(recipient), recipientLamports, 'nothing reaches the wallet before the end');
      assert.equal(env.tokenBalance(holders[i + 1]!), net, `holder ${i + 1} has the net amount`);
      if (i > 0) assert.equal(env.tokenBalance(holders[i]!), 0n, `holder ${i} emptied`);
    }
    assert.equal(
      env.tokenBalance(holders[0]!),
      last ? 0n : feeTokens,
      'custody keeps the fee until settlement',
    );
    const step = readStep(env, fixture.addresses.steps[i]![0]);
    assert.equal(step.status, 'executed');
    assert.equal(step.amount, net);
    const route = env.route(fixture.routeAddress);
    assert.equal(route.status, last ? 'settled' : 'active');
    assert.equal(env.exists(env.tokens.recipient), false, 'the recipient never has a wrapped SOL account');
    env.assertConserved();
  }
}

/** Rent of the route's token accounts (custody and intermediates) as the chain holds it. */
function tokenAccountRent(env: RouterEnv, accounts: readonly Address[]): bigint {
  const decoder = getTokenDecoder();
  return accounts.reduce((total, address) => {
    const account = env.svm.getAccount(address);
    assert.ok(account.exists, `${address} exists`);
    const reserve = decoder.decode(account.data).isNative;
    assert.equal(reserve.__option, 'Some', 'a wrapped SOL account');
    return total + (reserve.__option === 'Some' ? reserve.value : 0n);
  }, 0n);
}

for (const { variant, tokenProgram, label } of ROUTER_TARGETS) {
  describe(`router program ${label}: native SOL routes`, () => {
    test('3-hop route to an empty wallet: exactly the net amount arrives as SOL, fees in their accounts', async () => {
      const env = await createRouterEnv(variant, { tokenProgram, native: true });
      const { source, keeper, integrator, recipient } = env.wallets;
      const start = balances(env);
      assert.equal(env.exists(recipient.address), false, 'the wallet does not exist yet');
      const fixture = await deployRoute(env, { hopCount: 3, amount: 1_234_567_891n });
      assert.equal(env.exists(env.tokens.recipient), false, 'deployment created no recipient token account');
      const route = env.route(fixture.routeAddress);
      assert.equal(route.mint, NATIVE_MINT_ADDRESS);
      assert.equal(route.recipientToken, null);
      // 1% of 1_234_567_891 rounded up is 12_345_679; the integrator's 30% of it, rounded down, 3_703_703.
      assert.equal(route.netAmount, 1_222_222_212n);
      assert.equal(route.platformFeeTokens, 8_641_976n);
      assert.equal(route.integratorFeeTokens, 3_703_703n);
      const routeLamports = env.lamports(fixture.routeAddress);

      await executeAll(env, fixture, 1_222_222_212n, 12_345_679n);

      const wallet = env.svm.getAccount(recipient.address);
      assert.ok(wallet.exists);
      assert.equal(wallet.lamports, 1_222_222_212n, 'the wallet holds exactly the net amount');
      assert.equal(wallet.data.length, 0);
      assert.equal(wallet.programAddress, '11111111111111111111111111111111');
      assert.equal(env.tokenBalance(env.tokens.platformFee), 8_641_976n);
      assert.equal(env.tokenBalance(env.tokens.integratorFee), 3_703_703n);
      assert.equal(env.lamports(env.config[0]), start.platform + 21_000n);
      assert.equal(env.lamports(integrator.address), start.integrator + 9_000n);
      // The route paid out the flat fee and kept the closed account's rent for the reclaim.
      const tokenRent = rent(env, TOKEN_ACCOUNT_BYTES);
      assert.equal(env.lamports(fixture.routeAddress), routeLamports - 30_000n + tokenRent);
      assert.equal(env.route(fixture.routeAddress).tokensLive, 0b011);

      const figures = computeRecovery(await snapshot(env, fixture), env.now());
      assert.deepEqual(
        figures.reclaimableAccounts.map((a) => [a.kind, a.lamports]),
        [
          ['route_pda', rent(env, 736) + tokenRent],
          ['step_state', rent(env, 72)],
          ['step_state', rent(env, 72)],
          ['step_state', rent(env, 72)],
          ['ata', tokenRent],
          ['ata', tokenRent],
          ['orchestrator_config', rent(env, 56)],
          ['keeper', env.lamports(keeper.address)],
        ],
      );
      await recover(env, fixture, 'reclaim');
      assertFullyRecovered(env, fixture);
      // The source is left with exactly: fees, the flat protocol fee and the SOL it sent; no rent.
      assert.equal(
        env.lamports(source.address),
        start.source - (env.fees(source.address) - start.fees) - env.fees(keeper.address) - 30_000n,
      );
      assert.equal(env.tokenBalance(env.tokens.source), SOURCE_TOKENS - 1_234_567_891n);
      assert.equal(env.lamports(recipient.address), 1_222_222_212n);
    });

    test('10-hop route to a funded wallet: every hop on schedule, to the lamport; reclaim returns every lamport of rent', async () => {
      const env = await createRouterEnv(variant, {
        tokenProgram,
        native: true,
        recipientLamports: 1_000_000_000n,
      });
      const { source, keeper, integrator, recipient } = env.wallets;
      const start = balances(env);
      const fixture = await deployRoute(env, {
        hopCount: 10,
        amount: 5_000_000_001n,
        percentFeeBps: 35,
        integratorShareBps: 2500,
        intervalSecs: 45,
      });
      // 0.35% of 5_000_000_001 is 17_500_000.0035, rounded up 17_500_001; integrator 25% rounded down.
      await executeAll(env, fixture, 4_982_500_000n, 17_500_001n);
      assert.equal(env.lamports(recipient.address), 1_000_000_000n + 4_982_500_000n);
      assert.equal(env.tokenBalance(env.tokens.integratorFee), 4_375_000n);
      assert.equal(env.tokenBalance(env.tokens.platformFee), 13_125_001n);
      assert.equal(env.lamports(env.config[0]), start.platform + 75_000n);
      assert.equal(env.lamports(integrator.address), start.integrator + 25_000n);
      for (const hop of fixture.hops.slice(0, -1)) assert.equal(env.tokenBalance(hop.address), 0n);

      const figures = computeRecovery(await snapshot(env, fixture), env.now());
      assert.equal(figures.canRescue, false);
      assert.deepEqual(
        figures.reclaimableAccounts.map((a) => a.kind),
        [
          'route_pda',
          ...Array(10).fill('step_state'),
          ...Array(9).fill('ata'),
          'orchestrator_config',
          'keeper',
        ],
      );
      const reclaimed = await recover(env, fixture, 'reclaim');
      assert.equal(reclaimed.transactions, 2);
      assert.equal(reclaimed.lamports, figures.reclaimableLamports);
      assertFullyRecovered(env, fixture);
      assert.equal(
        env.lamports(source.address),
        start.source - (env.fees(source.address) - start.fees) - env.fees(keeper.address) - 100_000n,
      );
      assert.equal(env.tokenBalance(env.tokens.source), SOURCE_TOKENS - 5_000_000_001n);
    });

    test('a route rescued before its last step returns the wrapped SOL to the source token account', async () => {
      const env = await createRouterEnv(variant, { tokenProgram, native: true });
      const { source, keeper, integrator, recipient } = env.wallets;
      const start = balances(env);
      const fixture = await deployRoute(env, { hopCount: 4, amount: 2_000_000_000n });
      for (const i of [0, 1, 2]) await execute(env, fixture, i);
      expectOk(await env.send(keeper, [getMarkFailedInstruction({ keeper, route: fixture.routeAddress })]));
      env.assertConserved();

      const { lamports: rescued } = await recover(env, fixture, 'rescue');
      assertFullyRecovered(env, fixture);
      assert.ok(rescued > 0n);
      assert.equal(env.tokenBalance(env.tokens.source), SOURCE_TOKENS, 'every wrapped lamport is back');
      // Nothing was earned and no recipient account was paid for: the source lost only fees.
      assert.equal(
        env.lamports(source.address),
        start.source - (env.fees(source.address) - start.fees) - env.fees(keeper.address),
      );
      assert.equal(env.lamports(env.config[0]), start.platform);
      assert.equal(env.lamports(integrator.address), start.integrator);
      assert.equal(env.tokenBalance(env.tokens.platformFee), 0n);
      assert.equal(env.tokenBalance(env.tokens.integratorFee), 0n);
      assert.equal(env.exists(recipient.address), false, 'the recipient got nothing');
    });

    test('the recipient wallet is fixed: creation, session init and the last step refuse any other', async () => {
      const env = await createRouterEnv(variant, { tokenProgram, native: true });
      const { source, stranger, recipient } = env.wallets;
      const fixture = await prepareEndpoint(env, { hopCount: 3 });
      const create = (terms: Partial<RouteFixture['terms']>) =>
        env.send(source, [createRouteInstruction(env, fixture, { terms })]);
      // A native route names no recipient token account, and its wallet is not the custody.
      expectRouterError(await create({ recipientToken: env.tokens.recipient }), 'InvalidRouteParameters');
      expectRouterError(await create({ recipient: fixture.addresses.custody[0] }), 'InvalidRouteParameters');
      // The delivery must leave even an empty wallet rent exempt.
      const walletRent = rent(env, 0);
      expectRouterError(await create({ amount: walletRent - 1n, percentFeeBps: 0 }), 'InvalidAmount');
      assert.throws(
        () =>
          planFixtureDeployment(env, fixture, {
            terms: { ...fixture.terms, recipientToken: env.tokens.recipient },
          }),
        /names no recipient token account/,
      );
      expectOk(await create({ amount: walletRent, percentFeeBps: 0 }));

      const plan = planFixtureDeployment(env, fixture, {
        terms: { ...fixture.terms, amount: walletRent, percentFeeBps: 0 },
        hopSigners: [],
        onChain: { keeperFunded: false, route: env.route(fixture.routeAddress), orchestratorExists: false },
      });
      expectOk(await env.send(source, plan.keeperFunding!));
      expectOk(await env.send(source, plan.orchestratorInit!, { legacy: true }));
      assert.deepEqual(
        plan.sessionInit.map((group) => group.length),
        [1],
        'no recipient token account to create',
      );
      const initSteps = (recipientHolder: Address) =>
        env.send(source, [
          getInitStepsInstruction({
            source,
            route: fixture.routeAddress,
            orchestrator: fixture.addresses.orchestrator[0],
            recipientHolder,
            steps: fixture.addresses.steps.map((pda, index) => ({ index, pda })),
          }),
        ]);
      expectRouterError(await initSteps(stranger.address), 'InvalidRecipientAccount');
      expectRouterError(await initSteps(env.tokens.recipient), 'InvalidRecipientAccount');
      expectOk(await env.send(source, plan.sessionInit[0]!));
      assert.equal(env.route(fixture.routeAddress).status, 'active');

      for (const i of [0, 1]) await execute(env, fixture, i);
      env.setTime(stepReleaseAt(env.route(fixture.routeAddress), 2));
      const final = stepAccounts(env, fixture, 2);
      assert.equal(final.to, recipient.address);
      const strangerLamports = env.lamports(stranger.address);
      expectRouterError(
        await executeStep(env, fixture, 2, { ...final, to: stranger.address }),
        'WrongDestination',
      );
      expectRouterError(
        await executeStep(env, fixture, 2, { ...final, to: env.tokens.recipient }),
        'WrongDestination',
      );
      expectRouterError(
        await executeStep(env, fixture, 2, { ...final, from: fixture.addresses.custody[0] }),
        'WrongSourceAccount',
      );
      const instruction = getExecuteStepInstruction({
        keeper: env.wallets.keeper,
        index: 2,
        accounts: final,
      });
      const readonlyWallet: Instruction = {
        ...instruction,
        accounts: instruction.accounts!.map((a) =>
          a.address === recipient.address ? { address: a.address, role: AccountRole.READONLY } : a,
        ),
      };
      expectRouterError(await env.send(env.wallets.keeper, [readonlyWallet]), 'AccountNotWritable');
      assert.equal(env.lamports(stranger.address), strangerLamports);
      assert.equal(env.exists(recipient.address), false);
      env.assertConserved();

      // The smallest native route settles into an empty wallet, which ends exactly rent exempt.
      expectOk(await executeStep(env, fixture, 2));
      assert.equal(env.lamports(recipient.address), walletRent);
      env.assertConserved();
    });

    test("the fee estimate's rent is what the chain charges and the reclaim returns, native or not", async () => {
      for (const native of [true, false]) {
        const env = await createRouterEnv(variant, { tokenProgram, native });
        const estimator = createSolCostEstimator({
          chain: {
            getMinimumBalanceForRentExemption: async (size) =>
              lamports(env.svm.minimumBalanceForRentExemption(BigInt(size))),
          },
          // No priority fees: the keeper's margin is one signature's fee.
          priorityFees: { floorMicroLamportsPerCu: 0n, capMicroLamportsPerCu: 0n, hopBudgetMultiplier: 1 },
        });
        const estimate = await estimator.estimate({
          hops: 4,
          protocolFlatFeeLamports: 40_000n,
          mint: env.mint,
        });
        const fixture = await deployRoute(env, { hopCount: 4 });
        const routeTokenAccounts = [fixture.addresses.custody[0], ...fixture.hops.map((h) => h.address)];
        const paidTokenRent = native
          ? tokenAccountRent(env, routeTokenAccounts)
          : [...routeTokenAccounts, env.tokens.recipient].reduce((total, a) => total + env.lamports(a), 0n);
        // The estimate also counts, in full, the platform fee account the service's bundle creates
        // for a new mint (the deployment tests of the API check it); on the native mint not the
        // wrapped-SOL account the bundle opens for the source and closes in the same transaction.
        assert.equal(
          estimate.breakdown.ataRentLamports,
          paidTokenRent + rent(env, 165),
          `token account rent (native: ${native})`,
        );
        assert.equal(env.exists(env.tokens.recipient), !native);

        for (let i = 0; i < 4; i++) await execute(env, fixture, i);
        const reclaimed = await recover(env, fixture, 'reclaim');
        // The estimate counts the keeper's rent-exempt minimum and its margin of one hop's fee as
        // refundable (the reclaim sweeps whatever the keeper has left): what the reclaim returns.
        assert.equal(
          estimate.refundableLamports,
          reclaimed.lamports - reclaimed.keeperLamports + rent(env, 0) + 5000n,
          `refundable lamports (native: ${native})`,
        );
      }
    });
  });
}
