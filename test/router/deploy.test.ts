import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  AccountRole,
  type Address,
  appendTransactionMessageInstructions,
  createNoopSigner,
  createTransactionMessage,
  generateKeyPairSigner,
  type Instruction,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayerSigner,
  signTransaction,
} from '@solana/kit';
import {
  getSetComputeUnitLimitInstruction,
  getSetComputeUnitPriceInstruction,
} from '@solana-program/compute-budget';
import { getTransferSolInstruction } from '@solana-program/system';
import { decodeRouterConfig } from '../../src/chain/router/accounts.ts';
import {
  getAddHopsInstruction,
  getCloseOrchestratorInstruction,
  getInitConfigInstruction,
  getInitOrchestratorInstruction,
  getInitStepsInstruction,
  getUpdateConfigInstruction,
  type RouteTerms,
} from '../../src/chain/router/instructions.ts';
import { findOrchestratorPda, findRoutePda } from '../../src/chain/router/pda.ts';
import { ROUTER_PROGRAM_ADDRESS } from '../../src/chain/router/program.ts';
import {
  createRouteInstruction,
  createRouterEnv,
  deployRoute,
  expectOk,
  expectRouterError,
  MAX_TX_SIZE,
  planFixtureDeployment,
  prepareEndpoint,
  ROUTER_TARGETS,
  type RouteFixture,
  type RouterEnv,
  readOrchestrator,
  readStep,
} from './harness.ts';
import { decodeCloseOrchestratorReturn } from './returns.ts';

function planFor(env: RouterEnv, fixture: RouteFixture, hopSigners = fixture.hops, recipientAccount = true) {
  return planFixtureDeployment(env, fixture, {
    hopSigners,
    onChain: {
      keeperFunded: env.lamports(env.wallets.keeper.address) > 0n,
      route: env.routeOrNull(fixture.routeAddress),
      orchestratorExists: env.exists(fixture.addresses.orchestrator[0]),
    },
    createRecipientTokenAccount: recipientAccount,
  });
}

async function sendAll(env: RouterEnv, groups: Instruction[][], legacy = false) {
  for (const instructions of groups) {
    const result = expectOk(await env.send(env.wallets.source, instructions, { legacy }));
    assert.ok(result.size <= MAX_TX_SIZE, `transaction of ${result.size} bytes`);
  }
}

for (const { variant, tokenProgram, label } of ROUTER_TARGETS) {
  describe(`router program ${label}: deployment`, () => {
    test('protocol config: created only by the upgrade authority, at its PDA, changed only by the admin', async () => {
      const env = await createRouterEnv(variant, { tokenProgram });
      const { admin, stranger, screener, platform } = env.wallets;
      const init = (signer = admin, config = env.config) =>
        getInitConfigInstruction({
          admin: signer,
          config,
          programData: env.programData,
          screeningAuthority: screener.address,
          platformWallet: platform.address,
          screeningDepositLamports: 1n,
        });
      expectRouterError(await env.send(stranger, [init(stranger)]), 'NotUpgradeAuthority');
      expectRouterError(await env.send(admin, [init()]), 'AccountAlreadyInitialized');
      const notThePda = (await generateKeyPairSigner()).address;
      expectRouterError(await env.send(admin, [init(admin, [notThePda, env.config[1]])]), 'InvalidPda');
      const wrongProgram = init();
      const accounts = wrongProgram.accounts!.map((a, i) =>
        i === 2 ? { ...a, address: stranger.address } : a,
      );
      expectRouterError(await env.send(admin, [{ ...wrongProgram, accounts }]), 'InvalidProgramAccount');

      const config = env.svm.getAccount(env.config[0]);
      assert.ok(config.exists);
      assert.deepEqual(decodeRouterConfig(config.data), {
        admin: admin.address,
        screeningAuthority: screener.address,
        platformWallet: platform.address,
        screeningDepositLamports: 2_000_000n,
        bump: env.config[1],
      });
      const update = (signer = admin, newAdmin: Address = stranger.address) =>
        getUpdateConfigInstruction({
          admin: signer,
          config: env.config[0],
          newAdmin,
          screeningAuthority: stranger.address,
          platformWallet: platform.address,
          screeningDepositLamports: 3_000_000n,
        });
      expectRouterError(await env.send(stranger, [update(stranger)]), 'NotAdmin');
      expectRouterError(
        await env.send(admin, [update(admin, '11111111111111111111111111111111' as Address)]),
        'InvalidRouteParameters',
      );
      expectOk(await env.send(admin, [update()]));
      const updated = env.svm.getAccount(env.config[0]);
      assert.ok(updated.exists);
      assert.deepEqual(decodeRouterConfig(updated.data), {
        admin: stranger.address,
        screeningAuthority: stranger.address,
        platformWallet: platform.address,
        screeningDepositLamports: 3_000_000n,
        bump: env.config[1],
      });
    });

    test('orchestrator config: a legacy transaction, idempotent, only at the source PDA, closable when idle', async () => {
      const env = await createRouterEnv(variant, { tokenProgram });
      const { source, stranger } = env.wallets;
      const orchestrator = await findOrchestratorPda(source.address);
      env.track(orchestrator[0]);
      const init = getInitOrchestratorInstruction({ source, orchestrator });
      expectOk(await env.send(source, [init], { legacy: true }));
      const lamports = env.lamports(orchestrator[0]);
      assert.equal(lamports, env.svm.minimumBalanceForRentExemption(56n));
      assert.deepEqual(readOrchestrator(env, orchestrator[0]), {
        source: source.address,
        openRoutes: 0,
        bump: orchestrator[1],
        routesTotal: 0n,
      });
      expectOk(await env.send(source, [init], { legacy: true }));
      assert.equal(env.lamports(orchestrator[0]), lamports);
      const strangers = await findOrchestratorPda(stranger.address);
      expectRouterError(
        await env.send(source, [getInitOrchestratorInstruction({ source, orchestrator: strangers })]),
        'InvalidPda',
      );
      expectRouterError(
        await env.send(stranger, [
          getCloseOrchestratorInstruction({ source: stranger, orchestrator: orchestrator[0] }),
        ]),
        'InvalidOrchestrator',
      );
      const before = env.lamports(source.address);
      const closed = expectOk(
        await env.send(source, [getCloseOrchestratorInstruction({ source, orchestrator: orchestrator[0] })]),
      );
      assert.equal(decodeCloseOrchestratorReturn(closed.returnData), lamports);
      assert.equal(env.lamports(source.address), before + lamports - 5000n);
      assert.equal(env.exists(orchestrator[0]), false);
      env.assertConserved();
    });

    test('a 10-hop route deploys in transactions of at most 1232 bytes and resumes from existingHopCount', async () => {
      const env = await createRouterEnv(variant, { tokenProgram });
      const fixture = await prepareEndpoint(env, { hopCount: 10 });
      const full = planFor(env, fixture);
      assert.equal(full.routeInit.length, 2);
      assert.deepEqual(full.resume, {
        routeAlreadyDeployed: false,
        existingHopCount: 0,
        totalHops: 10,
        completedStepIndices: [],
        totalSteps: 10,
      });
      await sendAll(env, [full.keeperFunding!, full.routeInit[0]!]);
      let route = env.route(fixture.routeAddress);
      assert.equal(route.status, 'deploying');
      assert.equal(route.hopsRegistered, 5);

      // Resuming: only the missing intermediate accounts, with fresh signers, from the count on chain.
      const fresh = await Promise.all(Array.from({ length: 4 }, () => generateKeyPairSigner()));
      env.track(...fresh.map((s) => s.address));
      const resumed = planFor(env, fixture, fresh);
      assert.equal(resumed.keeperFunding, null);
      assert.equal(resumed.routeInit.length, 1);
      assert.equal(resumed.resume.existingHopCount, 5);
      expectRouterError(
        await env.send(env.wallets.source, [
          getInitStepsInstruction({
            source: env.wallets.source,
            route: fixture.routeAddress,
            orchestrator: fixture.addresses.orchestrator[0],
            recipientHolder: env.tokens.recipient,
            steps: [{ index: 0, pda: fixture.addresses.steps[0]! }],
          }),
        ]),
        'DeploymentIncomplete',
      );
      await sendAll(env, resumed.routeInit);
      route = env.route(fixture.routeAddress);
      assert.equal(route.hopsRegistered, 9);
      assert.deepEqual(
        route.hops,
        [...fixture.hops.slice(0, 5), ...fresh].map((s) => s.address),
      );
      expectRouterError(await env.send(env.wallets.source, resumed.routeInit[0]!), 'HopCountMismatch');

      const session = planFor(env, fixture, []);
      assert.equal(session.routeInit.length, 0);
      assert.equal(session.resume.routeAlreadyDeployed, true);
      expectRouterError(await env.send(env.wallets.source, session.sessionInit[0]!), 'InvalidOrchestrator');
      await sendAll(env, [session.orchestratorInit!], true);
      await sendAll(env, session.sessionInit);
      route = env.route(fixture.routeAddress);
      assert.equal(route.status, 'active');
      assert.equal(route.stepsLive, 0b11_1111_1111);
      assert.equal(readOrchestrator(env, fixture.addresses.orchestrator[0]).openRoutes, 1);
      assert.equal(readStep(env, fixture.addresses.steps[9]![0]).index, 9);

      const done = planFor(env, fixture, []);
      assert.deepEqual(done.sessionInit, []);
      assert.equal(done.orchestratorInit, null);
      assert.deepEqual(done.resume.completedStepIndices, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      // Re-sending session init is harmless: existing steps are skipped.
      const lamports = env.lamports(env.wallets.source.address);
      expectOk(await env.send(env.wallets.source, session.sessionInit[0]!));
      assert.equal(env.lamports(env.wallets.source.address), lamports - 5000n);
      const extra = await generateKeyPairSigner();
      expectRouterError(
        await env.send(env.wallets.source, [
          getAddHopsInstruction({
            source: env.wallets.source,
            route: fixture.routeAddress,
            mint: env.mint,
            existingHopCount: 9,
            hops: [extra],
          }),
        ]),
        'RouteNotDeploying',
      );
      env.assertConserved();
    });

    test('the wallet signs a route-init transaction the service partially signed with the hop keys', async () => {
      const env = await createRouterEnv(variant, { tokenProgram });
      // The largest route-init transaction, with room left for both compute-budget instructions.
      const fixture = await prepareEndpoint(env, { hopCount: 6 });
      const wallet = createNoopSigner(env.wallets.source.address);
      const instruction = createRouteInstruction(env, fixture, { source: wallet });
      const message = pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(wallet, m),
        (m) => env.svm.setTransactionMessageLifetimeUsingLatestBlockhash(m),
        (m) =>
          appendTransactionMessageInstructions(
            [
              getSetComputeUnitLimitInstruction({ units: 80_000 }),
              // Zero keeps the fee arithmetic of the conservation check simple; any price has this size.
              getSetComputeUnitPriceInstruction({ microLamports: 0n }),
              instruction,
            ],
            m,
          ),
      );
      const partial = await partiallySignTransactionMessageWithSigners(message);
      assert.equal(partial.signatures[env.wallets.source.address], null, 'the wallet has not signed yet');
      const signed = await signTransaction([env.wallets.source.keyPair], partial);
      const result = expectOk(env.sendSigned(signed));
      assert.ok(result.size <= MAX_TX_SIZE, `${result.size} bytes`);
      assert.equal(env.route(fixture.routeAddress).hopsRegistered, 5);
      env.assertConserved();
    });

    test('route terms and accounts are validated before anything moves', async () => {
      const env = await createRouterEnv(variant, { tokenProgram });
      const { source, stranger } = env.wallets;
      const fixture = await prepareEndpoint(env, { hopCount: 3 });
      const send = (instruction: Instruction) => env.send(source, [instruction]);
      const cases: [Partial<RouteTerms>, Parameters<typeof expectRouterError>[1]][] = [
        [{ hopCount: 2 }, 'InvalidHopCount'],
        [{ hopCount: 11 }, 'InvalidHopCount'],
        [{ percentFeeBps: 10_001 }, 'InvalidFeeParameters'],
        [{ integratorShareBps: 10_001 }, 'InvalidFeeParameters'],
        [{ amount: 0n }, 'InvalidAmount'],
        [{ percentFeeBps: 10_000 }, 'InvalidAmount'],
        [{ deadlineAt: fixture.terms.firstReleaseAt + 120n }, 'InvalidSchedule'],
        [{ keeper: '11111111111111111111111111111111' as Address }, 'InvalidRouteParameters'],
        [{ recipientToken: fixture.addresses.custody[0] }, 'InvalidRouteParameters'],
        [{ routeId: 2n }, 'InvalidPda'],
      ];
      for (const [terms, error] of cases)
        expectRouterError(await send(createRouteInstruction(env, fixture, { terms })), error);

      const past = await prepareEndpoint(env, { hopCount: 3, routeId: 9n });
      env.setTime(past.terms.deadlineAt);
      expectRouterError(await send(createRouteInstruction(env, past)), 'InvalidSchedule');
      env.setTime(fixture.terms.firstReleaseAt - 60n);

      expectRouterError(
        await send(createRouteInstruction(env, fixture, { platformFeeToken: env.tokens.integratorFee })),
        'InvalidFeeAccount',
      );
      expectRouterError(
        await send(createRouteInstruction(env, fixture, { integratorFeeToken: env.mint })),
        'InvalidFeeAccount',
      );
      expectRouterError(
        await send(createRouteInstruction(env, fixture, { sourceToken: env.tokens.platformFee })),
        'InvalidSourceTokenAccount',
      );
      expectRouterError(
        await send(createRouteInstruction(env, fixture, { mint: env.tokens.source })),
        'InvalidMint',
      );
      expectRouterError(
        await send(createRouteInstruction(env, fixture, { config: stranger.address })),
        'InvalidConfig',
      );
      const extra = await generateKeyPairSigner();
      expectRouterError(
        await send(createRouteInstruction(env, fixture, { hops: [...fixture.hops, extra] })),
        'TooManyHops',
      );
      const unsignedHop = createRouteInstruction(env, fixture);
      const accounts = unsignedHop.accounts!.map((a, i) =>
        i === 10 ? { address: a.address, role: AccountRole.WRITABLE } : a,
      );
      expectRouterError(await send({ ...unsignedHop, accounts }), 'MissingSignature');
      expectRouterError(
        await env.send(stranger, [createRouteInstruction(env, fixture, { source: stranger })]),
        'InvalidSourceTokenAccount',
      );

      expectOk(await send(createRouteInstruction(env, fixture)));
      const again = await prepareEndpoint(env, { hopCount: 3 });
      expectRouterError(await send(createRouteInstruction(env, again)), 'AccountAlreadyInitialized');
      expectRouterError(
        await env.send(stranger, [
          getAddHopsInstruction({
            source: stranger,
            route: fixture.routeAddress,
            mint: env.mint,
            existingHopCount: 2,
            hops: [extra],
          }),
        ]),
        'NotSource',
      );
      expectRouterError(
        await send(
          getAddHopsInstruction({
            source,
            route: fixture.routeAddress,
            mint: env.mint,
            existingHopCount: 2,
            hops: [extra],
          }),
        ),
        'TooManyHops',
      );
      env.assertConserved();
    });

    test('session init checks the steps, the orchestrator and the recipient account', async () => {
      const env = await createRouterEnv(variant, { tokenProgram });
      const { source, stranger } = env.wallets;
      const fixture = await prepareEndpoint(env, { hopCount: 3 });
      const plan = planFor(env, fixture, fixture.hops, false);
      await sendAll(env, [...plan.routeInit]);
      await sendAll(env, [plan.orchestratorInit!], true);
      const steps = (
        list: { index: number; pda: (typeof fixture.addresses.steps)[number] }[],
        signer = source,
      ) =>
        getInitStepsInstruction({
          source: signer,
          route: fixture.routeAddress,
          orchestrator: fixture.addresses.orchestrator[0],
          recipientHolder: env.tokens.recipient,
          steps: list,
        });
      const [s0, s1, s2] = fixture.addresses.steps as [
        (typeof fixture.addresses.steps)[0],
        (typeof fixture.addresses.steps)[0],
        (typeof fixture.addresses.steps)[0],
      ];
      expectRouterError(await env.send(stranger, [steps([{ index: 0, pda: s0 }], stranger)]), 'NotSource');
      expectRouterError(
        await env.send(source, [steps([{ index: 0, pda: [s0[0], (s0[1] + 1) % 256] as never }])]),
        'InvalidPda',
      );
      expectRouterError(await env.send(source, [steps([{ index: 0, pda: s1 }])]), 'InvalidPda');
      expectRouterError(await env.send(source, [steps([{ index: 3, pda: s0 }])]), 'InvalidStepIndex');
      // Without the recipient's token account the last step cannot be prepared.
      expectRouterError(await env.send(source, [steps([{ index: 2, pda: s2 }])]), 'InvalidRecipientAccount');
      expectOk(
        await env.send(source, [
          steps([
            { index: 0, pda: s0 },
            { index: 1, pda: s1 },
          ]),
        ]),
      );
      assert.equal(env.route(fixture.routeAddress).status, 'deploying');
      expectRouterError(await env.send(source, [steps([{ index: 0, pda: s1 }])]), 'InvalidStepAccount');
      const withRecipient = planFor(env, fixture, []);
      assert.equal(withRecipient.sessionInit.length, 1);
      await sendAll(env, withRecipient.sessionInit);
      assert.equal(env.route(fixture.routeAddress).status, 'active');
      env.assertConserved();
    });

    test('lamports sent ahead to the route, custody, hop or step addresses cannot block deployment', async () => {
      const env = await createRouterEnv(variant, { tokenProgram });
      const { stranger } = env.wallets;
      const fixture = await prepareEndpoint(env, { hopCount: 3 });
      const targets = [
        fixture.routeAddress,
        fixture.addresses.custody[0],
        fixture.hops[0]!.address,
        fixture.addresses.steps[1]![0],
      ];
      expectOk(
        await env.send(
          stranger,
          targets.map((destination) =>
            getTransferSolInstruction({ source: stranger, destination, amount: 1_000_000n }),
          ),
        ),
      );
      const plan = planFor(env, fixture);
      await sendAll(env, [plan.keeperFunding!, ...plan.routeInit]);
      await sendAll(env, [plan.orchestratorInit!], true);
      await sendAll(env, plan.sessionInit);
      assert.equal(env.route(fixture.routeAddress).status, 'active');
      assert.equal(env.tokenBalance(fixture.addresses.custody[0]), fixture.terms.amount);
      env.assertConserved();
    });

    test('accounts of the wrong owner are refused', async () => {
      const env = await createRouterEnv(variant, { tokenProgram });
      const { source } = env.wallets;
      const fixture = await deployRoute(env, { hopCount: 3 });
      // A byte-for-byte copy of the route owned by another program is not a route.
      const route = env.svm.getAccount(fixture.routeAddress);
      assert.ok(route.exists);
      const fake = (await findRoutePda(source.address, 77n))[0];
      env.svm.setAccount({ ...route, address: fake, programAddress: env.tokens.source });
      const extra = await generateKeyPairSigner();
      expectRouterError(
        await env.send(source, [
          getAddHopsInstruction({ source, route: fake, mint: env.mint, existingHopCount: 2, hops: [extra] }),
        ]),
        'InvalidAccountOwner',
      );
      const config = env.svm.getAccount(env.config[0]);
      assert.ok(config.exists);
      const fakeConfig = (await generateKeyPairSigner()).address;
      env.svm.setAccount({
        ...config,
        address: fakeConfig,
        programAddress: ROUTER_PROGRAM_ADDRESS === fakeConfig ? fakeConfig : env.mint,
      });
      const other = await prepareEndpoint(env, { hopCount: 3, routeId: 5n });
      expectRouterError(
        await env.send(source, [createRouteInstruction(env, other, { config: fakeConfig })]),
        'InvalidConfig',
      );
    });
  });
}
