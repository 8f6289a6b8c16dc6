import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createNoopSigner, generateKeyPairSigner, type Instruction } from '@solana/kit';
import fc from 'fast-check';
import { TRANSACTION_SIZE_LIMIT, transactionSize } from '../transactions.ts';
import { NATIVE_MINT_ADDRESS, type Route } from './accounts.ts';
import { planDeployment, planRecovery } from './bundle.ts';
import { RouterInstruction } from './instructions.ts';
import { findRouteAddresses } from './pda.ts';
import { ROUTER_PROGRAM_ADDRESS } from './program.ts';

const address = async () => (await generateKeyPairSigner()).address;
const tag = (ix: Instruction) =>
  ix.programAddress === ROUTER_PROGRAM_ADDRESS ? ix.data![0] : ix.programAddress;

async function deploymentInput(hopCount: number, route: Route | null = null, orchestratorExists = false) {
  const source = createNoopSigner(await address());
  const hopSigners = await Promise.all(Array.from({ length: hopCount - 1 }, () => generateKeyPairSigner()));
  return {
    source,
    keeper: await address(),
    keeperFundingLamports: 1_000_000n,
    terms: {
      routeId: 1n,
      hopCount,
      amount: 1000n,
      percentFeeBps: 100,
      integratorShareBps: 3000,
      flatFeePerHopLamports: 10_000n,
      firstReleaseAt: 100n,
      intervalSecs: 60,
      deadlineAt: 10_000n,
      keeper: await address(),
      recipient: await address(),
      recipientToken: await address(),
      integratorWallet: await address(),
      screeningRequired: false,
      maxDepositLamports: 0n,
    },
    mint: await address(),
    sourceToken: await address(),
    config: await address(),
    platformFeeToken: await address(),
    integratorFeeToken: await address(),
    addresses: await findRouteAddresses({ source: source.address, routeId: 1n, hopCount }),
    hopSigners,
    onChain: { keeperFunded: false, route, orchestratorExists },
  };
}

test('deployment groups per hop count: one route-init transaction up to 6 hops, two beyond', async () => {
  const counts = [];
  for (let hops = 3; hops <= 10; hops++) {
    const plan = planDeployment(await deploymentInput(hops));
    counts.push(plan.routeInit.length);
    assert.equal(plan.sessionInit.length, 1);
    assert.deepEqual(plan.sessionInit[0]!.map(tag), [
      'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL',
      RouterInstruction.InitSteps,
    ]);
    assert.equal(plan.orchestratorInit!.length, 1);
    assert.equal(plan.keeperFunding!.length, 1);
    const created = plan.routeInit.flatMap((ixs) =>
      ixs[0]!.accounts!.filter(
        (a) => 'signer' in a && a.address !== plan.keeperFunding![0]!.accounts![0]!.address,
      ),
    );
    assert.equal(created.length, hops - 1, 'every intermediate account signs exactly once');
  }
  assert.deepEqual(counts, [1, 1, 1, 1, 2, 2, 2, 2]);
});

test('every transaction of every bundle fits 1,232 bytes: any hop count, mint, resume point, fee account', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        hops: fc.integer({ min: 3, max: 10 }),
        native: fc.boolean(),
        keeperFunded: fc.boolean(),
        feeTokenMissing: fc.boolean(),
        wrappedAccountOpened: fc.boolean(),
        orchestratorExists: fc.boolean(),
        // How far an earlier broadcast got: no route, or intermediates and steps registered.
        progress: fc.option(fc.record({ registered: fc.nat(), steps: fc.nat({ max: 1023 }) }), { nil: null }),
      }),
      async (c) => {
        const base = await deploymentInput(c.hops);
        const route =
          c.progress &&
          ({
            status: 'deploying',
            hopsRegistered: c.progress.registered % c.hops,
            stepsLive:
              c.progress.registered % c.hops === c.hops - 1 ? c.progress.steps & ((1 << c.hops) - 1) : 0,
          } as Route);
        const mint = c.native ? NATIVE_MINT_ADDRESS : base.mint;
        const plan = planDeployment({
          ...base,
          mint,
          terms: { ...base.terms, recipientToken: c.native ? null : base.terms.recipientToken },
          onChain: { keeperFunded: c.keeperFunded, route, orchestratorExists: c.orchestratorExists },
          createPlatformFeeToken: c.feeTokenMissing,
          ...(c.native && !route ? { wrapSol: { amount: 5n, closeAfter: c.wrappedAccountOpened } } : {}),
        });
        const groups: [Instruction[], 0 | 'legacy'][] = [
          ...(plan.keeperFunding ? [[plan.keeperFunding, 0] as [Instruction[], 0]] : []),
          ...plan.routeInit.map((ixs) => [ixs, 0] as [Instruction[], 0]),
          ...(plan.orchestratorInit ? [[plan.orchestratorInit, 'legacy'] as [Instruction[], 'legacy']] : []),
          ...plan.sessionInit.map((ixs) => [ixs, 0] as [Instruction[], 0]),
        ];
        for (const [instructions, version] of groups) {
          const size = transactionSize({ feePayer: base.source.address, instructions, version });
          assert.ok(size <= TRANSACTION_SIZE_LIMIT, `${JSON.stringify(c)}: a transaction of ${size} bytes`);
        }
        // Every missing intermediate account is created once, and every missing step.
        const registered = route?.hopsRegistered ?? 0;
        const signers = plan.routeInit.flatMap((ixs) =>
          ixs
            .find((ix) => ix.programAddress === ROUTER_PROGRAM_ADDRESS)!
            .accounts!.filter((a) => 'signer' in a && a.address !== base.source.address),
        );
        assert.equal(signers.length, c.hops - 1 - registered);
        const stepsCreated = plan.sessionInit.flatMap((ixs) =>
          [...ixs.at(-1)!.data!.slice(1)].filter((_, i) => i % 2 === 0),
        );
        const live = route?.stepsLive ?? 0;
        assert.deepEqual(
          stepsCreated,
          Array.from({ length: c.hops }, (_, i) => i).filter((i) => (live & (1 << i)) === 0),
        );
        assert.equal(
          plan.platformFeeTokenIn,
          !c.feeTokenMissing ? null : !c.keeperFunded ? 'keeperFunding' : route ? null : 'routeInit',
        );
      },
    ),
    { numRuns: 300 },
  );
});

test('a native-mint route creates no recipient token account; session init names the recipient wallet', async () => {
  const input = await deploymentInput(4);
  const terms = { ...input.terms, recipientToken: null };
  const plan = planDeployment({ ...input, mint: NATIVE_MINT_ADDRESS, terms });
  assert.deepEqual(
    plan.sessionInit.map((group) => group.map(tag)),
    [[RouterInstruction.InitSteps]],
  );
  const initSteps = plan.sessionInit[0]![0]!;
  assert.equal(initSteps.accounts![3]!.address, terms.recipient);
  const spl = planDeployment(input);
  assert.equal(spl.sessionInit[0]!.at(-1)!.accounts![3]!.address, input.terms.recipientToken);

  assert.throws(
    () => planDeployment({ ...input, mint: NATIVE_MINT_ADDRESS }),
    /a native-mint route names no recipient token account/,
  );
  assert.throws(() => planDeployment({ ...input, terms }), /the route needs the recipient token account/);
});

test('a partial deployment resumes with AddHops from the hop count on chain and skips existing steps', async () => {
  const input = await deploymentInput(10);
  const route = { status: 'deploying', hopsRegistered: 4, stepsLive: 0 } as Route;
  const fresh = input.hopSigners.slice(0, 5);

  const plan = planDeployment({
    ...input,
    hopSigners: fresh,
    onChain: { keeperFunded: true, route, orchestratorExists: true },
  });
  assert.equal(plan.keeperFunding, null);
  assert.equal(plan.orchestratorInit, null);
  assert.equal(plan.routeInit.length, 1);
  assert.deepEqual([...plan.routeInit[0]![0]!.data!], [RouterInstruction.AddHops, 4]);
  assert.equal(plan.resume.existingHopCount, 4);
  assert.equal(plan.resume.routeAlreadyDeployed, false);
  assert.throws(
    () =>
      planDeployment({
        ...input,
        hopSigners: fresh.slice(1),
        onChain: { keeperFunded: true, route, orchestratorExists: true },
      }),
    /need 5 fresh hop signers, got 4/,
  );

  const sessions = planDeployment({
    ...input,
    hopSigners: [],
    onChain: {
      keeperFunded: true,
      route: { ...route, hopsRegistered: 9, stepsLive: 0b1000000101 },
      orchestratorExists: true,
    },
  });
  assert.deepEqual(sessions.routeInit, []);
  assert.deepEqual(sessions.resume.completedStepIndices, [0, 2, 9]);
  const initSteps = sessions.sessionInit[0]!.at(-1)!;
  const indices = [...initSteps.data!.slice(1)].filter((_, i) => i % 2 === 0);
  assert.deepEqual(indices, [1, 3, 4, 5, 6, 7, 8]);

  const active = planDeployment({
    ...input,
    hopSigners: [],
    onChain: {
      keeperFunded: true,
      route: { ...route, status: 'active', hopsRegistered: 9, stepsLive: 1023 },
      orchestratorExists: true,
    },
  });
  assert.deepEqual(
    [active.keeperFunding, active.routeInit, active.orchestratorInit, active.sessionInit],
    [null, [], null, []],
  );
});

test('recovery closes token accounts first, in chunks, and sweeps the keeper before the last router instruction', async () => {
  const source = createNoopSigner(await address());
  const keeper = createNoopSigner(await address());
  const hops = await Promise.all(Array.from({ length: 9 }, address));
  const steps = await Promise.all(Array.from({ length: 10 }, address));
  const custody = await address();
  const route = { custody, hops, tokensLive: 0b11_1111_1111, stepsLive: 0b11_1111_1110 } as unknown as Route;
  const groups = planRecovery({
    kind: 'rescue',
    source,
    routeAddress: await address(),
    route,
    orchestrator: await address(),
    steps,
    sourceToken: await address(),
    closeOrchestrator: true,
    keeperSweep: { keeper, lamports: 5n },
  });
  assert.deepEqual(
    groups.map((g) => g.map(tag)),
    [[RouterInstruction.Rescue], ['11111111111111111111111111111111', RouterInstruction.Rescue]],
  );
  const closed = groups.flatMap((g) =>
    g
      .at(-1)!
      .accounts!.slice(5)
      .map((a) => a.address),
  );
  assert.deepEqual(closed, [custody, ...hops, ...steps.slice(1)]);
  assert.deepEqual([...groups[0]![0]!.data!], [RouterInstruction.Rescue, 0]);
  assert.deepEqual([...groups[1]!.at(-1)!.data!], [RouterInstruction.Rescue, 1]);

  const afterClose = planRecovery({
    kind: 'reclaim',
    source,
    routeAddress: await address(),
    route: null,
    orchestrator: await address(),
    steps,
    sourceToken: await address(),
    closeOrchestrator: true,
    keeperSweep: { keeper, lamports: 0n },
  });
  assert.deepEqual(
    afterClose.map((g) => g.map(tag)),
    [[RouterInstruction.CloseOrchestrator]],
  );
});
