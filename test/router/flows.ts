import assert from 'node:assert/strict';
import { stepReleaseAt } from '../../src/chain/router/accounts.ts';
import { planRecovery } from '../../src/chain/router/bundle.ts';
import {
  type ExecuteStepAccounts,
  getExecuteStepAccounts,
  getExecuteStepInstruction,
} from '../../src/chain/router/instructions.ts';
import { computeRecovery, readRouteSnapshot } from '../../src/chain/router/recovery.ts';
import { expectOk, MAX_TX_SIZE, type RouteFixture, type RouterEnv } from './harness.ts';
import { decodeRecoveryReturn, recoveredLamports } from './returns.ts';

/*
 * Route flows the router tests share: a step executed when due, and rescue or reclaim bundles
 * checked against the recovery figures computed from the chain beforehand.
 */

/** The accounts step `index` of the fixture's route must be executed with, from the route on chain. */
export function stepAccounts(env: RouterEnv, fixture: RouteFixture, index: number): ExecuteStepAccounts {
  const route = env.route(fixture.routeAddress);
  return getExecuteStepAccounts(fixture.routeAddress, route, index, fixture.addresses.steps[index]![0]);
}

/** Sends step `index` as the keeper, now, with the given accounts (by default the right ones). */
export function executeStep(
  env: RouterEnv,
  fixture: RouteFixture,
  index: number,
  accounts = stepAccounts(env, fixture, index),
) {
  return env.send(env.wallets.keeper, [
    getExecuteStepInstruction({ keeper: env.wallets.keeper, index, accounts }),
  ]);
}

/** Executes step `index` as the keeper at its release time; it must succeed. */
export async function execute(env: RouterEnv, fixture: RouteFixture, index: number) {
  env.setTime(stepReleaseAt(env.route(fixture.routeAddress), index));
  return expectOk(await executeStep(env, fixture, index));
}

/** The route's accounts as `readRouteSnapshot` reads them, straight from the chain. */
export function snapshot(env: RouterEnv, fixture: RouteFixture) {
  return readRouteSnapshot(async (addresses) => addresses.map((a) => env.svm.getAccount(a)), {
    source: env.wallets.source.address,
    routeId: fixture.terms.routeId,
    hopCount: fixture.terms.hopCount,
    keeper: env.wallets.keeper.address,
  });
}

/**
 * Sends the rescue or reclaim bundle (the source pays, the keeper co-signs its sweep) and checks
 * that the source receives exactly what the recovery figures predicted from the chain. Returns the
 * number of transactions and the lamports the source received (of which the keeper's sweep).
 */
export async function recover(env: RouterEnv, fixture: RouteFixture, kind: 'rescue' | 'reclaim') {
  const { source, keeper } = env.wallets;
  const figures = computeRecovery(await snapshot(env, fixture), env.now());
  assert.equal(kind === 'rescue' ? figures.canRescue : figures.canReclaimRent, true, `${kind} possible`);
  const predicted = kind === 'rescue' ? figures.rescuableLamports : figures.reclaimableLamports;
  const predictedTokens = figures.rescuableTokens;
  const sourceLamports = env.lamports(source.address);
  const sourceTokens = env.tokenBalance(env.tokens.source);
  const sourceFees = env.fees(source.address);
  const keeperLamports = env.lamports(keeper.address);
  const groups = planRecovery({
    kind,
    source,
    routeAddress: fixture.routeAddress,
    route: env.routeOrNull(fixture.routeAddress),
    orchestrator: fixture.addresses.orchestrator[0],
    steps: fixture.addresses.steps.map(([a]) => a),
    sourceToken: env.tokens.source,
    closeOrchestrator: figures[kind === 'rescue' ? 'rescuableAccounts' : 'reclaimableAccounts'].some(
      (a) => a.kind === 'orchestrator_config',
    ),
    keeperSweep: { keeper, lamports: keeperLamports },
  });
  let reported = 0n;
  let tokens = 0n;
  for (const instructions of groups) {
    const result = expectOk(await env.send(source, instructions));
    assert.ok(result.size <= MAX_TX_SIZE, `transaction of ${result.size} bytes`);
    const returned = decodeRecoveryReturn(result.returnData);
    reported += recoveredLamports(returned);
    tokens += returned.tokens;
    env.assertConserved();
  }
  reported += keeperLamports;
  const fees = env.fees(source.address) - sourceFees;
  assert.equal(
    env.lamports(source.address) - sourceLamports + fees,
    predicted,
    'the source got what was predicted',
  );
  assert.equal(reported, predicted, 'the instructions reported what the source got');
  assert.equal(env.tokenBalance(env.tokens.source) - sourceTokens, tokens);
  if (kind === 'rescue') assert.equal(tokens, predictedTokens);
  return { transactions: groups.length, lamports: reported, keeperLamports };
}

/** Every account of the route is gone and the source holds all its tokens again. */
export function assertFullyRecovered(env: RouterEnv, fixture: RouteFixture) {
  for (const address of [
    fixture.routeAddress,
    fixture.addresses.custody[0],
    fixture.addresses.orchestrator[0],
    ...fixture.hops.map((h) => h.address),
    ...fixture.addresses.steps.map(([a]) => a),
  ]) {
    assert.equal(env.exists(address), false, `${address} closed`);
  }
  assert.equal(env.lamports(env.wallets.keeper.address), 0n);
  env.assertConserved();
}
