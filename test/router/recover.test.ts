import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AccountRole, type Instruction } from '@solana/kit';
import { getTransferInstruction } from '@solana-program/token';
import { planRecovery } from '../../src/chain/router/bundle.ts';
import {
  getCloseOrchestratorInstruction,
  getMarkFailedInstruction,
  getReclaimInstruction,
  getRescueInstruction,
  getScreenRouteInstruction,
  type RecoverInput,
} from '../../src/chain/router/instructions.ts';
import { computeRecovery } from '../../src/chain/router/recovery.ts';
import { assertFullyRecovered, execute, recover, snapshot } from './flows.ts';
import {
  createRouterEnv,
  deployRoute,
  expectOk,
  expectRouterError,
  planFixtureDeployment,
  prepareEndpoint,
  ROUTER_TARGETS,
  type RouteFixture,
  type RouterEnv,
  readOrchestrator,
  SCREENING_DEPOSIT,
  SOURCE_TOKENS,
} from './harness.ts';

interface Stage {
  name: string;
  hopCount: number;
  screeningRequired?: boolean;
  /** Brings the route to the stage; returns lamports the source legitimately lost (a forfeited deposit). */
  reach(env: RouterEnv, fixture: RouteFixture): Promise<bigint>;
}

async function deployPartially(
  env: RouterEnv,
  fixture: RouteFixture,
  routeInitTxs: number,
  session: boolean,
) {
  const plan = planFixtureDeployment(env, fixture);
  for (const group of [plan.keeperFunding!, ...plan.routeInit.slice(0, routeInitTxs)]) {
    expectOk(await env.send(env.wallets.source, group));
  }
  if (session) {
    expectOk(await env.send(env.wallets.source, plan.orchestratorInit!, { legacy: true }));
    expectOk(await env.send(env.wallets.source, plan.sessionInit[0]!.slice(0, 1)));
    const initSteps = plan.sessionInit[0]!.at(-1)!;
    // Only the first step: the session is interrupted.
    const partial: Instruction = {
      ...initSteps,
      accounts: initSteps.accounts!.slice(0, 6),
      data: initSteps.data!.slice(0, 3),
    };
    expectOk(await env.send(env.wallets.source, [partial]));
  }
}

const screen = (env: RouterEnv, fixture: RouteFixture, verdict: 'verified' | 'flagged') =>
  env.send(env.wallets.screener, [
    getScreenRouteInstruction({
      authority: env.wallets.screener,
      config: env.config[0],
      route: fixture.routeAddress,
      source: env.wallets.source.address,
      platformWallet: env.config[0],
      verdict,
    }),
  ]);

const STAGES: Stage[] = [
  {
    name: 'route created, intermediate accounts half registered',
    hopCount: 10,
    reach: async (env, fixture) => {
      await deployPartially(env, fixture, 1, false);
      assert.equal(env.route(fixture.routeAddress).hopsRegistered, 5);
      return 0n;
    },
  },
  {
    name: 'route deployed, session interrupted after one step state',
    hopCount: 4,
    screeningRequired: true,
    reach: async (env, fixture) => {
      await deployPartially(env, fixture, 9, true);
      assert.equal(env.route(fixture.routeAddress).stepsLive, 0b0001);
      return 0n;
    },
  },
  {
    name: 'active but never executed, past its deadline',
    hopCount: 4,
    reach: async (env, fixture) => {
      await deployRoute(env, { hopCount: 4 });
      env.setTime(fixture.terms.deadlineAt + 1n);
      return 0n;
    },
  },
  {
    name: 'failed by the keeper after the first hop',
    hopCount: 4,
    reach: async (env, fixture) => {
      await deployRoute(env, { hopCount: 4 });
      await execute(env, fixture, 0);
      const { keeper } = env.wallets;
      expectOk(await env.send(keeper, [getMarkFailedInstruction({ keeper, route: fixture.routeAddress })]));
      return 0n;
    },
  },
  {
    name: 'overdue after three of ten hops, screening verified',
    hopCount: 10,
    screeningRequired: true,
    reach: async (env, fixture) => {
      await deployRoute(env, { hopCount: 10, screeningRequired: true });
      expectOk(await screen(env, fixture, 'verified'));
      for (const i of [0, 1, 2]) await execute(env, fixture, i);
      env.setTime(fixture.terms.deadlineAt + 1n);
      return 0n;
    },
  },
  {
    name: 'flagged by screening',
    hopCount: 4,
    screeningRequired: true,
    reach: async (env, fixture) => {
      await deployRoute(env, { hopCount: 4, screeningRequired: true });
      expectOk(await screen(env, fixture, 'flagged'));
      return SCREENING_DEPOSIT;
    },
  },
];

for (const { variant, tokenProgram, label } of ROUTER_TARGETS) {
  describe(`router program ${label}: rescue and reclaim`, () => {
    for (const stage of STAGES) {
      test(`rescue returns everything: ${stage.name}`, async () => {
        const env = await createRouterEnv(variant, { tokenProgram });
        const { source, keeper, integrator } = env.wallets;
        const start = {
          source: env.lamports(source.address),
          platform: env.lamports(env.config[0]),
          integrator: env.lamports(integrator.address),
        };
        const fixture = await prepareEndpoint(env, {
          hopCount: stage.hopCount,
          screeningRequired: stage.screeningRequired ?? false,
        });
        const forfeited = await stage.reach(env, fixture);
        await recover(env, fixture, 'rescue');
        assertFullyRecovered(env, fixture);
        assert.equal(env.tokenBalance(env.tokens.source), SOURCE_TOKENS);
        // Nothing was earned: the source paid transaction fees (its own and the keeper's), the rent
        // of the recipient's token account once session init created it (that account is the
        // recipient's) and, when flagged, the deposit.
        const recipientAccountRent = env.lamports(env.tokens.recipient);
        assert.equal(
          env.lamports(source.address),
          start.source -
            env.fees(source.address) -
            env.fees(keeper.address) -
            recipientAccountRent -
            forfeited,
        );
        assert.equal(env.lamports(env.config[0]), start.platform + forfeited);
        assert.equal(env.lamports(integrator.address), start.integrator);
        assert.equal(env.tokenBalance(env.tokens.platformFee), 0n);
        assert.equal(env.tokenBalance(env.tokens.integratorFee), 0n);
      });
    }

    test('settled route: reclaim returns every lamport of rent, rescue is refused', async () => {
      const env = await createRouterEnv(variant, { tokenProgram });
      const { source, keeper, integrator } = env.wallets;
      const start = {
        source: env.lamports(source.address),
        platform: env.lamports(env.config[0]),
        integrator: env.lamports(integrator.address),
      };
      const fixture = await deployRoute(env, { hopCount: 10 });
      for (let i = 0; i < 10; i++) await execute(env, fixture, i);
      const rescue = getRescueInstruction({
        source,
        route: fixture.routeAddress,
        orchestrator: fixture.addresses.orchestrator[0],
        sourceToken: env.tokens.source,
        close: [fixture.addresses.custody[0]],
      });
      expectRouterError(await env.send(source, [rescue]), 'RouteSettled');
      const figures = computeRecovery(await snapshot(env, fixture), env.now());
      assert.equal(figures.canRescue, false);
      assert.equal(figures.reclaimableStepCount, 10);
      assert.deepEqual(
        figures.reclaimableAccounts.map((a) => a.kind),
        [
          'route_pda',
          ...Array(10).fill('step_state'),
          ...Array(10).fill('ata'),
          'orchestrator_config',
          'keeper',
        ],
      );
      assert.equal((await recover(env, fixture, 'reclaim')).transactions, 2);
      assertFullyRecovered(env, fixture);
      // The source is left with exactly: fees, the flat protocol fee, the tokens it sent.
      assert.equal(
        env.lamports(source.address),
        start.source -
          env.fees(source.address) -
          env.fees(keeper.address) -
          env.lamports(env.tokens.recipient) -
          100_000n,
      );
      assert.equal(env.lamports(env.config[0]), start.platform + 70_000n);
      assert.equal(env.lamports(integrator.address), start.integrator + 30_000n);
      assert.equal(env.tokenBalance(env.tokens.source), SOURCE_TOKENS - fixture.terms.amount);
    });

    test('nobody but the source rescues, an active route is neither rescued nor reclaimed early', async () => {
      const env = await createRouterEnv(variant, { tokenProgram });
      const { source, stranger } = env.wallets;
      const fixture = await deployRoute(env, { hopCount: 3 });
      const input = (overrides: Partial<RecoverInput> = {}): RecoverInput => ({
        source,
        route: fixture.routeAddress,
        orchestrator: fixture.addresses.orchestrator[0],
        sourceToken: env.tokens.source,
        close: [fixture.addresses.custody[0]],
        ...overrides,
      });
      expectRouterError(await env.send(source, [getRescueInstruction(input())]), 'RouteNotRescuable');
      expectRouterError(await env.send(source, [getReclaimInstruction(input())]), 'RouteNotReclaimable');
      env.setTime(fixture.terms.deadlineAt + 1n);
      expectRouterError(await env.send(source, [getReclaimInstruction(input())]), 'RouteNotReclaimable');
      expectRouterError(
        await env.send(stranger, [getRescueInstruction(input({ source: stranger }))]),
        'NotSource',
      );
      const rescue = getRescueInstruction(input());
      const unsigned: Instruction = {
        ...rescue,
        accounts: rescue.accounts!.map((a, i) =>
          i === 0 ? { address: a.address, role: AccountRole.WRITABLE } : a,
        ),
      };
      expectRouterError(await env.send(stranger, [unsigned]), 'MissingSignature');
      expectRouterError(
        await env.send(source, [getRescueInstruction(input({ sourceToken: env.tokens.platformFee }))]),
        'InvalidSourceTokenAccount',
      );
      expectRouterError(
        await env.send(source, [getRescueInstruction(input({ close: [env.tokens.integratorFee] }))]),
        'UnknownRouteAccount',
      );
      const other = await deployRoute(env, { hopCount: 3, routeId: 2n });
      expectRouterError(
        await env.send(source, [getRescueInstruction(input({ close: [other.addresses.steps[0]![0]] }))]),
        'UnknownRouteAccount',
      );
      expectRouterError(
        await env.send(source, [getRescueInstruction(input({ close: [other.addresses.custody[0]] }))]),
        'UnknownRouteAccount',
      );
      const custody = fixture.addresses.custody[0];
      expectRouterError(
        await env.send(source, [getRescueInstruction(input({ close: [custody, custody] }))]),
        'DuplicateAccount',
      );
      assert.equal(env.tokenBalance(custody), fixture.terms.amount);
      env.assertConserved();
    });

    test('tokens anyone sends to the route accounts go to the source at reclaim and never block it', async () => {
      const env = await createRouterEnv(variant, { tokenProgram });
      const { source, recipient } = env.wallets;
      const fixture = await deployRoute(env, { hopCount: 3 });
      for (let i = 0; i < 3; i++) await execute(env, fixture, i);
      const recipientTokens = env.tokenBalance(env.tokens.recipient);
      expectOk(
        await env.send(recipient, [
          getTransferInstruction({
            source: env.tokens.recipient,
            destination: fixture.hops[1]!.address,
            authority: recipient,
            amount: 7n,
          }),
        ]),
      );
      const before = env.tokenBalance(env.tokens.source);
      await recover(env, fixture, 'reclaim');
      assertFullyRecovered(env, fixture);
      assert.equal(env.tokenBalance(env.tokens.source), before + 7n);
      assert.equal(env.tokenBalance(env.tokens.recipient), recipientTokens - 7n);
      expectRouterError(
        await env.send(source, [
          getReclaimInstruction({
            source,
            route: fixture.routeAddress,
            orchestrator: fixture.addresses.orchestrator[0],
            sourceToken: env.tokens.source,
            close: [],
          }),
        ]),
        'InvalidAccountOwner',
      );
    });

    test('the orchestrator config stays while another route of the source is open', async () => {
      const env = await createRouterEnv(variant, { tokenProgram });
      const { source, keeper } = env.wallets;
      const first = await deployRoute(env, { hopCount: 3, routeId: 1n });
      const second = await deployRoute(env, { hopCount: 3, routeId: 2n });
      const orchestrator = first.addresses.orchestrator[0];
      assert.equal(readOrchestrator(env, orchestrator).openRoutes, 2);
      assert.equal(readOrchestrator(env, orchestrator).routesTotal, 2n);
      expectRouterError(
        await env.send(source, [getCloseOrchestratorInstruction({ source, orchestrator })]),
        'OrchestratorHasOpenRoutes',
      );
      for (let i = 0; i < 3; i++) await execute(env, first, i);
      const groups = planRecovery({
        kind: 'reclaim',
        source,
        routeAddress: first.routeAddress,
        route: env.route(first.routeAddress),
        orchestrator,
        steps: first.addresses.steps.map(([a]) => a),
        sourceToken: env.tokens.source,
        closeOrchestrator: true,
      });
      for (const group of groups) expectOk(await env.send(source, group));
      assert.equal(env.exists(first.routeAddress), false);
      assert.equal(readOrchestrator(env, orchestrator).openRoutes, 1);
      expectOk(await env.send(keeper, [getMarkFailedInstruction({ keeper, route: second.routeAddress })]));
      await recover(env, second, 'rescue');
      assertFullyRecovered(env, second);
    });
  });
}
