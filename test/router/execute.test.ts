import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AccountRole, type Instruction } from '@solana/kit';
import { getTransferInstruction } from '@solana-program/token';
import { stepReleaseAt } from '../../src/chain/router/accounts.ts';
import {
  getExecuteStepInstruction,
  getMarkFailedInstruction,
  getRescueInstruction,
  getScreenRouteInstruction,
} from '../../src/chain/router/instructions.ts';
import { executeStep, stepAccounts } from './flows.ts';
import {
  createRouterEnv,
  deployRoute,
  expectOk,
  expectRouterError,
  ROUTER_TARGETS,
  type RouteFixture,
  type RouterEnv,
  readStep,
  SCREENING_DEPOSIT,
} from './harness.ts';
import { decodeExecuteStepReturn, decodeScreenRouteReturn } from './returns.ts';

function releaseAt(env: RouterEnv, fixture: RouteFixture, index: number) {
  return stepReleaseAt(env.route(fixture.routeAddress), index);
}

/** Runs every step when due, checking balances, step state and conservation after each. */
async function executeAll(env: RouterEnv, fixture: RouteFixture, net: bigint, feeTokens: bigint) {
  const { holders, terms } = fixture;
  for (let i = 0; i < terms.hopCount; i++) {
    env.setTime(releaseAt(env, fixture, i));
    const result = expectOk(await executeStep(env, fixture, i));
    const last = i === terms.hopCount - 1;
    assert.deepEqual(decodeExecuteStepReturn(result.returnData), { index: i, amount: net, settled: last });
    assert.ok(result.computeUnits < 20_000n, `step ${i} used ${result.computeUnits} CU`);
    assert.equal(env.tokenBalance(holders[i + 1]!), net, `holder ${i + 1} has the net amount`);
    if (i > 0) assert.equal(env.tokenBalance(holders[i]!), 0n, `holder ${i} emptied`);
    assert.equal(
      env.tokenBalance(holders[0]!),
      last ? 0n : feeTokens,
      'custody keeps the fee until settlement',
    );
    const step = readStep(env, fixture.addresses.steps[i]![0]);
    assert.equal(step.status, 'executed');
    assert.equal(step.amount, net);
    assert.equal(step.executedAt, releaseAt(env, fixture, i));
    const route = env.route(fixture.routeAddress);
    assert.equal(route.nextStep, i + 1);
    assert.equal(route.status, last ? 'settled' : 'active');
    env.assertConserved();
  }
}

for (const { variant, tokenProgram, label } of ROUTER_TARGETS) {
  describe(`router program ${label}: hop execution`, () => {
    test('3-hop route: recipient gets the net amount, fees land in the fixed accounts at settlement', async () => {
      const env = await createRouterEnv(variant, { tokenProgram });
      const { source, integrator } = env.wallets;
      const sourceTokens = env.tokenBalance(env.tokens.source);
      const fixture = await deployRoute(env, { hopCount: 3, amount: 123_456_789n });
      assert.equal(env.tokenBalance(env.tokens.source), sourceTokens - 123_456_789n);
      // 1% of 123_456_789 rounded up is 1_234_568; the integrator's 30% of it, rounded down, 370_370.
      assert.equal(env.tokenBalance(fixture.addresses.custody[0]), 123_456_789n);
      const route = env.route(fixture.routeAddress);
      assert.equal(route.status, 'active');
      assert.equal(route.netAmount, 122_222_221n);
      assert.equal(route.platformFeeTokens, 864_198n);
      assert.equal(route.integratorFeeTokens, 370_370n);
      assert.equal(route.platformFlatLamports, 21_000n);
      assert.equal(route.integratorFlatLamports, 9_000n);
      const platformLamports = env.lamports(env.config[0]);
      const integratorLamports = env.lamports(integrator.address);
      const routeLamports = env.lamports(fixture.routeAddress);

      await executeAll(env, fixture, 122_222_221n, 1_234_568n);

      assert.equal(env.tokenBalance(env.tokens.recipient), 122_222_221n);
      assert.equal(env.tokenBalance(env.tokens.platformFee), 864_198n);
      assert.equal(env.tokenBalance(env.tokens.integratorFee), 370_370n);
      assert.equal(env.lamports(env.config[0]), platformLamports + 21_000n);
      assert.equal(env.lamports(integrator.address), integratorLamports + 9_000n);
      assert.equal(env.lamports(fixture.routeAddress), routeLamports - 30_000n);
      assert.equal(env.tokenBalance(env.tokens.source), sourceTokens - 123_456_789n);
      assert.equal(env.route(fixture.routeAddress).closedAt, releaseAt(env, fixture, 2));
      assert.ok(env.lamports(source.address) > 0n);
    });

    test('10-hop route: every hop on schedule to the recipient, to the base unit', async () => {
      const env = await createRouterEnv(variant, { tokenProgram });
      const { integrator } = env.wallets;
      const lamports = {
        platform: env.lamports(env.config[0]),
        integrator: env.lamports(integrator.address),
      };
      const fixture = await deployRoute(env, {
        hopCount: 10,
        amount: 5_000_000_001n,
        percentFeeBps: 35,
        integratorShareBps: 2500,
        intervalSecs: 45,
      });
      // 0.35% of 5_000_000_001 is 17_500_000.0035, rounded up 17_500_001; integrator 25% rounded down.
      await executeAll(env, fixture, 4_982_500_000n, 17_500_001n);
      assert.equal(env.tokenBalance(env.tokens.recipient), 4_982_500_000n);
      assert.equal(env.tokenBalance(env.tokens.integratorFee), 4_375_000n);
      assert.equal(env.tokenBalance(env.tokens.platformFee), 13_125_001n);
      for (const hop of fixture.hops) assert.equal(env.tokenBalance(hop.address), 0n);
      // Flat fee: 10 hops of 10_000 lamports, the integrator's 25% rounded down.
      assert.equal(env.lamports(env.config[0]), lamports.platform + 75_000n);
      assert.equal(env.lamports(integrator.address), lamports.integrator + 25_000n);
    });

    test('the keeper cannot execute early, twice, out of order, elsewhere, after the deadline or without signing', async () => {
      const env = await createRouterEnv(variant, { tokenProgram });
      const { keeper, stranger } = env.wallets;
      const fixture = await deployRoute(env, { hopCount: 3 });
      const first = releaseAt(env, fixture, 0);

      env.setTime(first - 1n);
      expectRouterError(await executeStep(env, fixture, 0), 'StepNotDue');
      env.setTime(first);
      expectRouterError(await executeStep(env, fixture, 1), 'StepOutOfOrder');
      expectRouterError(
        await executeStep(env, fixture, 3, stepAccounts(env, fixture, 2)),
        'InvalidStepIndex',
      );

      // Another destination: the stranger's token account instead of the fixed next hop.
      const strangerToken = env.tokens.platformFee;
      const elsewhere = { ...stepAccounts(env, fixture, 0), to: strangerToken };
      expectRouterError(await executeStep(env, fixture, 0, elsewhere), 'WrongDestination');
      const wrongSource = { ...stepAccounts(env, fixture, 0), from: fixture.hops[1]!.address };
      expectRouterError(await executeStep(env, fixture, 0, wrongSource), 'WrongSourceAccount');
      const wrongStep = { ...stepAccounts(env, fixture, 0), step: fixture.addresses.steps[1]![0] };
      expectRouterError(await executeStep(env, fixture, 0, wrongStep), 'InvalidStepAccount');

      // Someone else signing as keeper, and the keeper's key named without its signature.
      const accounts = stepAccounts(env, fixture, 0);
      expectRouterError(
        await env.send(stranger, [getExecuteStepInstruction({ keeper: stranger, index: 0, accounts })]),
        'NotKeeper',
      );
      const unsigned = getExecuteStepInstruction({ keeper, index: 0, accounts });
      const withoutSignature: Instruction = {
        ...unsigned,
        accounts: unsigned.accounts!.map((a, i) =>
          i === 0 ? { address: a.address, role: AccountRole.READONLY } : a,
        ),
      };
      expectRouterError(await env.send(stranger, [withoutSignature]), 'MissingSignature');

      expectOk(await executeStep(env, fixture, 0));
      expectRouterError(await executeStep(env, fixture, 0), 'StepAlreadyExecuted');

      // The last step must pay the recipient and the fixed fee accounts, nobody else.
      env.setTime(releaseAt(env, fixture, 2));
      expectOk(await executeStep(env, fixture, 1));
      const final = stepAccounts(env, fixture, 2);
      expectRouterError(
        await executeStep(env, fixture, 2, { ...final, to: strangerToken }),
        'WrongDestination',
      );
      expectRouterError(
        await executeStep(env, fixture, 2, {
          ...final,
          settlement: { ...final.settlement!, platformFeeToken: env.tokens.integratorFee },
        }),
        'InvalidFeeAccount',
      );
      expectRouterError(
        await executeStep(env, fixture, 2, {
          ...final,
          settlement: { ...final.settlement!, platformWallet: stranger.address },
        }),
        'InvalidFeeAccount',
      );
      env.setTime(env.route(fixture.routeAddress).deadlineAt + 1n);
      expectRouterError(await executeStep(env, fixture, 2), 'DeadlinePassed');
      env.assertConserved();
      assert.equal(env.tokenBalance(env.tokens.recipient), 0n);
    });

    test('a leaked keeper key moves nothing but the keeper SOL', async () => {
      const env = await createRouterEnv(variant, { tokenProgram });
      const { keeper, source } = env.wallets;
      const fixture = await deployRoute(env, { hopCount: 3 });
      const custody = fixture.addresses.custody[0];
      const direct = getTransferInstruction({
        source: custody,
        destination: env.tokens.platformFee,
        authority: keeper,
        amount: 1n,
      });
      const failed = await env.send(keeper, [direct]);
      assert.equal(failed.ok, false, 'the keeper is not the custody authority');
      expectRouterError(
        await env.send(keeper, [
          getRescueInstruction({
            source: keeper,
            route: fixture.routeAddress,
            orchestrator: fixture.addresses.orchestrator[0],
            sourceToken: env.tokens.source,
            close: [custody],
          }),
        ]),
        'NotSource',
      );
      // The worst it can do is give up on the route, which hands the tokens back to the source.
      expectOk(await env.send(keeper, [getMarkFailedInstruction({ keeper, route: fixture.routeAddress })]));
      assert.equal(env.route(fixture.routeAddress).status, 'failed');
      expectRouterError(
        await env.send(keeper, [getMarkFailedInstruction({ keeper, route: fixture.routeAddress })]),
        'RouteNotActive',
      );
      env.setTime(releaseAt(env, fixture, 0));
      expectRouterError(await executeStep(env, fixture, 0), 'RouteNotActive');
      expectRouterError(
        await env.send(source, [getMarkFailedInstruction({ keeper: source, route: fixture.routeAddress })]),
        'NotKeeper',
      );
      assert.equal(env.tokenBalance(custody), fixture.terms.amount);
      env.assertConserved();
    });

    test('screening: a pending route waits, a verified one gets its deposit back and runs', async () => {
      const env = await createRouterEnv(variant, { tokenProgram });
      const { screener, source, stranger } = env.wallets;
      const fixture = await deployRoute(env, { hopCount: 3, screeningRequired: true });
      const route = env.route(fixture.routeAddress);
      assert.equal(route.screening, 'pending');
      assert.equal(route.depositLamports, SCREENING_DEPOSIT);
      env.setTime(releaseAt(env, fixture, 0));
      expectRouterError(await executeStep(env, fixture, 0), 'ScreeningPending');

      const screen = (authority = screener, verdict: 'verified' | 'flagged' = 'verified') =>
        env.send(authority, [
          getScreenRouteInstruction({
            authority,
            config: env.config[0],
            route: fixture.routeAddress,
            source: source.address,
            platformWallet: env.config[0],
            verdict,
          }),
        ]);
      expectRouterError(await screen(stranger), 'NotScreeningAuthority');
      const sourceLamports = env.lamports(source.address);
      const routeLamports = env.lamports(fixture.routeAddress);
      const verified = expectOk(await screen());
      assert.deepEqual(decodeScreenRouteReturn(verified.returnData), {
        verdict: 'verified',
        depositLamports: SCREENING_DEPOSIT,
      });
      assert.equal(env.lamports(source.address), sourceLamports + SCREENING_DEPOSIT);
      assert.equal(env.lamports(fixture.routeAddress), routeLamports - SCREENING_DEPOSIT);
      expectRouterError(await screen(), 'ScreeningNotPending');
      expectOk(await executeStep(env, fixture, 0));
      env.assertConserved();
    });

    test('screening: a flagged route forfeits its deposit and never executes', async () => {
      const env = await createRouterEnv(variant, { tokenProgram });
      const { screener, source } = env.wallets;
      const fixture = await deployRoute(env, { hopCount: 3, screeningRequired: true });
      const platformLamports = env.lamports(env.config[0]);
      const flagged = expectOk(
        await env.send(screener, [
          getScreenRouteInstruction({
            authority: screener,
            config: env.config[0],
            route: fixture.routeAddress,
            source: source.address,
            platformWallet: env.config[0],
            verdict: 'flagged',
          }),
        ]),
      );
      assert.equal(decodeScreenRouteReturn(flagged.returnData).depositLamports, SCREENING_DEPOSIT);
      assert.equal(env.lamports(env.config[0]), platformLamports + SCREENING_DEPOSIT);
      const route = env.route(fixture.routeAddress);
      assert.equal(route.status, 'flagged');
      assert.equal(route.depositLamports, 0n);
      env.setTime(releaseAt(env, fixture, 0));
      expectRouterError(await executeStep(env, fixture, 0), 'RouteFlagged');
      env.assertConserved();
    });

    test('screening verdicts are refused on unscreened routes and for unknown verdicts', async () => {
      const env = await createRouterEnv(variant, { tokenProgram });
      const { screener, source } = env.wallets;
      const fixture = await deployRoute(env, { hopCount: 3 });
      const instruction = getScreenRouteInstruction({
        authority: screener,
        config: env.config[0],
        route: fixture.routeAddress,
        source: source.address,
        platformWallet: env.config[0],
        verdict: 'verified',
      });
      expectRouterError(await env.send(screener, [instruction]), 'ScreeningNotPending');
      const unknown = { ...instruction, data: new Uint8Array([6, 3]) };
      expectRouterError(await env.send(screener, [unknown]), 'InvalidVerdict');
    });
  });
}
