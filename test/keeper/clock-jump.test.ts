// A keeper worker sleeps until the next step falls due by the chain's clock, looking again at
// least every `maxSleepMs`. Where the chain announces a jump of its clock (the embedded chain's
// time travel, as `npm run demo -- --time-travel` does it) the keeper acts on it at once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Address } from '@solana/kit';
import { type Caller, createTestApp, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { deployRoute, quoteRoute } from '../helpers/route.ts';
import { chainNow, keeperWorker, transferOf, travelTo } from './helpers.ts';
import { waitUntil } from './worker-process.ts';

describe('a keeper asleep until the next step falls due', () => {
  let t: TestApp;
  let caller: Caller;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', { rateLimitMultiplier: 1000 });
  });
  after(() => t.close());

  test('wakes when the embedded chain travels in time, though it meant to sleep for minutes', async () => {
    const route = await quoteRoute(t, caller, { hops: 3, mint: SOL_MINT as Address, arrivalSeconds: 600 });
    const deployedAt = await chainNow(t);
    await deployRoute(t, caller, route);
    // The worker reads when work is next due just before it sleeps: then it is asleep (or about to
    // be, and a jump from then on still counts).
    let asleep!: () => void;
    const goneToSleep = new Promise<void>((resolve) => {
      asleep = resolve;
    });
    const worker = keeperWorker(t, {
      store: {
        ...t.store.hops,
        async nextWork(now, workerId) {
          const next = await t.store.hops.nextWork(now, workerId);
          asleep();
          return next;
        },
      },
      // Ten minutes between looks, and the first hop due in 200 s: only the jump wakes it in time.
      maxSleepMs: 600_000,
      onClockJump: t.chain.onTimeTravel,
    });
    worker.start();
    try {
      await goneToSleep;
      assert.equal((await transferOf(caller, route.id)).progress.hopsCompleted, 0, 'nothing is due yet');
      for (let hop = 1; hop <= 3; hop++) {
        await travelTo(t, deployedAt + BigInt(hop * 200));
        await waitUntil(
          async () => (await transferOf(caller, route.id)).progress.hopsCompleted === hop,
          `hop ${hop} landed after the jump`,
        );
      }
      assert.equal((await transferOf(caller, route.id)).status, 'completed');
    } finally {
      await worker.stop();
    }
  });
});
