// The schedule: hop k is due at t0 + k * floor(arrivalSeconds / n), t0 being the chain's clock when
// prepare built the route; a route taken over late runs its overdue hops at once, in order.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Address } from '@solana/kit';
import { findStepPda } from '../../src/chain/router/pda.ts';
import { type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { deployRoute, quoteRoute, tokenBalance } from '../helpers/route.ts';
import { type Bundle, broadcastBundle } from '../helpers/wallet.ts';
import { UNLIMITED } from '../route/helpers.ts';
import { chainNow, keeperWorker, routeOnChain, transferOf, travelTo } from './helpers.ts';

const GRACE_SECONDS = 3600n;

describe('the keeper’s schedule', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  let keeper: ReturnType<typeof keeperWorker>;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
    keeper = keeperWorker(t);
  });
  after(() => t.close());

  test('an arrival time that the hops do not divide: hop k due at t0 + k * floor(arrival / n), not a second earlier', async () => {
    const hops = 4;
    const arrivalSeconds = 607;
    const interval = BigInt(Math.floor(arrivalSeconds / hops));
    assert.equal(interval, 151n);
    const route = await quoteRoute(t, caller, { hops, mint: usdc, arrivalSeconds });
    const t0 = await chainNow(t);
    await deployRoute(t, caller, route);

    const { route: onChain } = await routeOnChain(t, route.id);
    assert.equal(onChain.firstReleaseAt, t0 + interval);
    assert.equal(onChain.intervalSecs, interval);
    assert.equal(onChain.deadlineAt, t0 + BigInt(hops) * interval + GRACE_SECONDS);
    for (let hop = 1; hop <= hops; hop++) {
      const due: bigint = t0 + BigInt(hop) * interval;
      await travelTo(t, due - 1n);
      assert.equal(await keeper.runOnce(), 0, `hop ${hop} waits until ${due}`);
      await travelTo(t, due);
      assert.equal(await keeper.runOnce(), 1, `hop ${hop} runs at ${due}`);
      const { steps } = await routeOnChain(t, route.id);
      assert.equal(steps[hop - 1]?.executedAt, due);
    }
    assert.equal((await transferOf(caller, route.id)).status, 'completed');
  });

  test('a route confirmed after several due times passed runs its overdue hops at once, in order, then waits for the next', async () => {
    const hops = 5;
    const arrivalSeconds = 500;
    const interval = 100n;
    const route = await quoteRoute(t, caller, { hops, mint: usdc, arrivalSeconds });
    const t0 = await chainNow(t);
    const prepared = await caller.post(`/api/v1/transfers/${route.id}/prepare`);
    assert.equal(prepared.statusCode, 200, prepared.body);
    const sent = await broadcastBundle(t.chain.chain, route.source, prepared.json().preparedTxs as Bundle);

    // The integrator confirms late: three hops are overdue by then.
    const late = t0 + 3n * interval + 30n;
    await travelTo(t, late);
    const confirmed = await caller.post(`/api/v1/transfers/${route.id}/confirm-broadcast`, sent);
    assert.equal(confirmed.statusCode, 200, confirmed.body);
    assert.equal(confirmed.json().transfer.status, 'processing');

    // Round after round, without the clock moving: hops 1, 2 and 3, then nothing until hop 4 is due.
    for (let hop = 1; hop <= 3; hop++) {
      assert.equal(await keeper.runOnce(), 1, `overdue hop ${hop}`);
      assert.equal((await transferOf(caller, route.id)).progress.hopsCompleted, hop);
    }
    assert.equal(await keeper.runOnce(), 0, 'hop 4 is not due yet');
    assert.equal(await chainNow(t), late, 'the clock did not move');

    const { address, route: onChain, steps } = await routeOnChain(t, route.id);
    assert.equal(onChain.nextStep, 3);
    assert.deepEqual(
      steps.map((step) => step.status),
      ['executed', 'executed', 'executed', 'pending', 'pending'],
    );
    assert.ok(
      steps.slice(0, 3).every((step) => step.executedAt === late),
      'all ran at once',
    );
    // Each recorded signature is its hop's transaction: the i-th names step state i.
    const transfer = await transferOf(caller, route.id);
    assert.equal(transfer.signatures.hops.length, 3);
    for (const [index, signature] of transfer.signatures.hops.entries()) {
      const landed = await t.chain.chain.getTransaction(signature);
      assert.equal(landed?.err, null);
      const [step] = await findStepPda(address, index, t.platform.programAddress);
      assert.ok(landed.accountKeys.includes(step), `hop ${index + 1} ran step ${index}`);
    }
    assert.deepEqual(
      keeper.logs
        .filter((line) => line.transferId === route.id)
        .map((line) => [line.msg, line.transferId, line.step, line.signature]),
      transfer.signatures.hops.map((signature: string, step: number) => [
        'hop landed',
        route.id,
        step,
        signature,
      ]),
      'overdue hops are no retries: nothing to report but their landings, in order',
    );

    // The rest keeps the original schedule: t0 + k * interval, not shifted by the late start.
    for (const hop of [4, 5]) {
      const due = t0 + BigInt(hop) * interval;
      await travelTo(t, due - 1n);
      assert.equal(await keeper.runOnce(), 0);
      await travelTo(t, due);
      assert.equal(await keeper.runOnce(), 1);
    }
    const done = await transferOf(caller, route.id);
    assert.deepEqual([done.status, done.phase], ['completed', 'settled']);
    assert.equal(await tokenBalance(t, route.recipient, usdc), BigInt(route.estimate.tokens.netDeliveredRaw));
    assert.equal(await keeper.hops('landed'), 9);
  });
});
