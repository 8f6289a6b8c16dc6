/**
 * Compute units and transaction sizes of the router program, per instruction and per hop count,
 * on both SBPF variants and both SPL Token programs (p-token, and the legacy spl_token 3.5.0 that
 * clusters ran before it), for SPL routes and native SOL routes (whose last step unwraps into the
 * recipient's wallet), measured on LiteSVM with the same bundles the service sends.
 * Run: npx node bench/program.ts
 */
import { planRecovery } from '../src/chain/router/bundle.ts';
import {
  getCloseOrchestratorInstruction,
  getInitOrchestratorInstruction,
  getMarkFailedInstruction,
  getScreenRouteInstruction,
  getUpdateConfigInstruction,
  getWithdrawLamportsInstruction,
  getWithdrawTokensInstruction,
} from '../src/chain/router/instructions.ts';
import { findOrchestratorPda } from '../src/chain/router/pda.ts';
import { execute } from '../test/router/flows.ts';
import {
  createRouterEnv,
  MAX_TX_SIZE,
  planFixtureDeployment,
  prepareEndpoint,
  ROUTER_TARGETS,
  type RouteFixture,
  type RouterEnv,
  type RouterTarget,
  type SendResult,
} from '../test/router/harness.ts';

interface Measure {
  /** Compute units (a count, not money: at most 1.4 million per transaction). */
  computeUnits: number;
  size: number;
}

function measured(result: SendResult, what: string): Measure {
  if (!result.ok) throw new Error(`${what} failed: ${result.error}\n${result.logs.join('\n')}`);
  return { computeUnits: Number(result.computeUnits), size: result.size };
}

interface RouteRun {
  deploy: { label: string; m: Measure }[];
  screen: Measure;
  hops: Measure[];
  reclaim: Measure[];
}

async function deployAndSettle(
  env: RouterEnv,
  hopCount: number,
): Promise<{ run: RouteRun; fixture: RouteFixture }> {
  const fixture = await prepareEndpoint(env, { hopCount, screeningRequired: true });
  const { source, keeper, screener } = env.wallets;
  const plan = planFixtureDeployment(env, fixture);
  const deploy: RouteRun['deploy'] = [];
  const step = async (label: string, instructions: Parameters<RouterEnv['send']>[1], legacy = false) =>
    deploy.push({ label, m: measured(await env.send(source, instructions, { legacy }), label) });
  await step('keeper funding', plan.keeperFunding!);
  for (const [i, group] of plan.routeInit.entries()) await step(i === 0 ? 'CreateRoute' : 'AddHops', group);
  await step('InitOrchestrator (legacy)', plan.orchestratorInit!, true);
  for (const group of plan.sessionInit) {
    await step(
      env.native ? 'native: InitSteps (no recipient account)' : 'InitSteps + recipient account',
      group,
    );
  }
  const screen = measured(
    await env.send(screener, [
      getScreenRouteInstruction({
        authority: screener,
        config: env.config[0],
        route: fixture.routeAddress,
        source: source.address,
        platformWallet: env.config[0],
        verdict: 'verified',
      }),
    ]),
    'ScreenRoute',
  );
  const hops: Measure[] = [];
  for (let index = 0; index < hopCount; index++) {
    hops.push(measured(await execute(env, fixture, index), `step ${index}`));
  }
  const reclaim: Measure[] = [];
  for (const group of planRecovery({
    kind: 'reclaim',
    source,
    routeAddress: fixture.routeAddress,
    route: env.route(fixture.routeAddress),
    orchestrator: fixture.addresses.orchestrator[0],
    steps: fixture.addresses.steps.map(([a]) => a),
    sourceToken: env.tokens.source,
    closeOrchestrator: true,
    keeperSweep: { keeper, lamports: env.lamports(keeper.address) },
  })) {
    reclaim.push(measured(await env.send(source, group), 'reclaim'));
  }
  return { run: { deploy, screen, hops, reclaim }, fixture };
}

async function rescueAfterFailure(target: RouterTarget, hopCount: number) {
  const env = await createRouterEnv(target.variant, { tokenProgram: target.tokenProgram });
  const fixture = await prepareEndpoint(env, { hopCount });
  const { source, keeper } = env.wallets;
  const plan = planFixtureDeployment(env, fixture);
  for (const group of [plan.keeperFunding!, ...plan.routeInit])
    measured(await env.send(source, group), 'deploy');
  measured(await env.send(source, plan.orchestratorInit!, { legacy: true }), 'orchestrator');
  for (const group of plan.sessionInit) measured(await env.send(source, group), 'session');
  measured(await execute(env, fixture, 0), 'step');
  const failed = measured(
    await env.send(keeper, [getMarkFailedInstruction({ keeper, route: fixture.routeAddress })]),
    'MarkFailed',
  );
  const rescue: Measure[] = [];
  for (const group of planRecovery({
    kind: 'rescue',
    source,
    routeAddress: fixture.routeAddress,
    route: env.route(fixture.routeAddress),
    orchestrator: fixture.addresses.orchestrator[0],
    steps: fixture.addresses.steps.map(([a]) => a),
    sourceToken: env.tokens.source,
    closeOrchestrator: true,
    keeperSweep: { keeper, lamports: env.lamports(keeper.address) },
  })) {
    rescue.push(measured(await env.send(source, group), 'rescue'));
  }
  return { failed, rescue };
}

async function smallInstructions(target: RouterTarget) {
  const env = await createRouterEnv(target.variant, { tokenProgram: target.tokenProgram });
  const { admin, source, screener, platform } = env.wallets;
  const update = measured(
    await env.send(admin, [
      getUpdateConfigInstruction({
        admin,
        config: env.config[0],
        newAdmin: admin.address,
        screeningAuthority: screener.address,
        platformWallet: platform.address,
        screeningDepositLamports: 2_000_000n,
      }),
    ]),
    'UpdateConfig',
  );
  const orchestrator = await findOrchestratorPda(source.address);
  measured(
    await env.send(source, [getInitOrchestratorInstruction({ source, orchestrator })], { legacy: true }),
    'init',
  );
  const close = measured(
    await env.send(source, [getCloseOrchestratorInstruction({ source, orchestrator: orchestrator[0] })]),
    'CloseOrchestrator',
  );
  // Withdrawals cost the same whatever the amount: nothing has been earned here, so 0 of each.
  const withdrawLamports = measured(
    await env.send(platform, [
      getWithdrawLamportsInstruction({
        platformWallet: platform,
        config: env.config[0],
        destination: platform.address,
        amount: 0n,
      }),
    ]),
    'WithdrawLamports',
  );
  const withdrawTokens = measured(
    await env.send(platform, [
      getWithdrawTokensInstruction({
        platformWallet: platform,
        config: env.config[0],
        vault: env.tokens.platformFee,
        destination: env.tokens.integratorFee,
        amount: 0n,
      }),
    ]),
    'WithdrawTokens',
  );
  return { update, close, withdrawLamports, withdrawTokens };
}

const maxCu = (ms: Measure[]) => Math.max(...ms.map((x) => x.computeUnits));
const maxSize = (ms: Measure[]) => Math.max(...ms.map((x) => x.size));
const sumCu = (ms: Measure[]) => ms.reduce((t, x) => t + x.computeUnits, 0);
const row = (cells: (string | number | bigint)[]) => `| ${cells.join(' | ')} |`;

async function main() {
  // Measures of each instruction, by target label.
  const perInstruction = new Map<string, Map<string, Measure>>();
  const put = (label: string, target: RouterTarget, m: Measure) =>
    perInstruction.set(label, new Map(perInstruction.get(label)).set(target.label, m));
  const perHops: string[] = [];
  let largest = 0;

  for (const target of ROUTER_TARGETS) {
    const { variant, tokenProgram } = target;
    for (let hopCount = 3; hopCount <= 10; hopCount++) {
      const env = await createRouterEnv(variant, { tokenProgram });
      const { run } = await deployAndSettle(env, hopCount);
      const { run: native } = await deployAndSettle(
        await createRouterEnv(variant, { native: true, tokenProgram }),
        hopCount,
      );
      const { failed, rescue } = await rescueAfterFailure(target, hopCount);
      const all = [
        ...[run, native].flatMap((r) => [...r.deploy.map((d) => d.m), r.screen, ...r.hops, ...r.reclaim]),
        failed,
        ...rescue,
      ];
      const biggest = maxSize(all);
      largest = Math.max(largest, biggest);
      const intermediate = run.hops.slice(0, -1);
      perHops.push(
        row([
          target.label,
          hopCount,
          run.deploy.length,
          sumCu(run.deploy.map((d) => d.m)),
          maxCu(intermediate),
          run.hops.at(-1)!.computeUnits,
          native.hops.at(-1)!.computeUnits,
          run.reclaim.length,
          rescue.length,
          biggest,
        ]),
      );
      if (hopCount === 10) {
        for (const d of run.deploy) {
          const label =
            d.label === 'AddHops'
              ? 'AddHops (4 accounts)'
              : d.label === 'CreateRoute'
                ? 'CreateRoute (5 accounts)'
                : d.label;
          if (d.label !== 'keeper funding') put(label, target, d.m);
        }
        put('ScreenRoute', target, run.screen);
        put('ExecuteStep (intermediate hop)', target, {
          computeUnits: maxCu(intermediate),
          size: maxSize(intermediate),
        });
        put('ExecuteStep (last hop, settlement)', target, run.hops.at(-1)!);
        put('MarkFailed', target, failed);
        put('Rescue (first of 2 txs, 12 accounts)', target, rescue[0]!);
        put('Reclaim (first of 2 txs, 12 accounts)', target, run.reclaim[0]!);
        put('Reclaim (last, + orchestrator + keeper sweep)', target, run.reclaim.at(-1)!);
        put(
          'native: CreateRoute (5 accounts)',
          target,
          native.deploy.find((d) => d.label === 'CreateRoute')!.m,
        );
        for (const d of native.deploy.filter((d) => d.label.includes('InitSteps'))) put(d.label, target, d.m);
        put('native: ExecuteStep (intermediate hop)', target, {
          computeUnits: maxCu(native.hops.slice(0, -1)),
          size: maxSize(native.hops.slice(0, -1)),
        });
        put('native: ExecuteStep (last hop, settlement, unwrap to the wallet)', target, native.hops.at(-1)!);
        put('native: Reclaim (first of 2 txs, 12 accounts)', target, native.reclaim[0]!);
      }
    }
    const small = await smallInstructions(target);
    put('UpdateConfig', target, small.update);
    put('CloseOrchestrator', target, small.close);
    put('WithdrawLamports', target, small.withdrawLamports);
    put('WithdrawTokens', target, small.withdrawTokens);
  }

  const lines = [
    '### Per instruction (10-hop route; CU of the whole transaction)',
    '',
    row(['instruction', ...ROUTER_TARGETS.map((t) => `CU ${t.label}`), 'tx bytes']),
    row(['---', ...ROUTER_TARGETS.map(() => '---:'), '---:']),
    ...[...perInstruction].map(([label, m]) =>
      row([
        label,
        ...ROUTER_TARGETS.map((t) => m.get(t.label)!.computeUnits),
        m.get(ROUTER_TARGETS[0]!.label)!.size,
      ]),
    ),
    '',
    '### Per hop count',
    '',
    row([
      'program',
      'hops',
      'deploy txs',
      'deploy CU (all txs)',
      'max CU, intermediate hop',
      'CU, last hop',
      'CU, last hop (native)',
      'reclaim txs',
      'rescue txs',
      'largest tx (bytes)',
    ]),
    row(['---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:']),
    ...perHops,
    '',
    `Largest transaction of any bundle: ${largest} bytes (limit ${MAX_TX_SIZE}).`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  if (largest > MAX_TX_SIZE) process.exitCode = 1;
}

await main();
