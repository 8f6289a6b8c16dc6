// Crash safety of the keeper: a worker process killed with SIGKILL at any point of a hop and
// started again carries every route to completion, without running a hop twice or losing or
// repeating an event. The worker is test/keeper/fixtures/crashing-worker.ts: the real keeper
// worker on the test app's PostgreSQL database and on its chain's JSON-RPC endpoint.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type { Address } from '@solana/kit';
import { type Caller, createTestApp, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { CRASH_POINTS, type CrashPoint } from './fixtures/crash-points.ts';
import { allCompleted, assertCarriedOnce, deployDueRoutes } from './helpers.ts';
import { startCrashingWorker, type WorkerProcess } from './worker-process.ts';

/** Slots past which a blockhash taken now is no longer accepted (150, with a margin). */
const BLOCKHASH_LIFETIME_SLOTS = 200;

/**
 * Where each route's worker dies, hop by hop: every point at least once, the settling hop among
 * them. After a death in the middle hop the chain moves past the blockhash's lifetime before the
 * next worker starts, so that it finds the hop's stored transaction expired (and a landed one only
 * in the chain's history); after the others it finds it still valid.
 */
const PLANS: { mint: 'usdc' | 'sol'; points: CrashPoint[] }[] = [
  { mint: 'usdc', points: ['claimed', 'stored', 'recorded'] },
  { mint: 'sol', points: ['stored', 'landed', 'recording'] },
  { mint: 'usdc', points: ['sent', 'recording', 'landed'] },
];
const MIDDLE = 1;

describe('a keeper worker killed at any point of a hop', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  let marks: string;
  const runs: WorkerProcess[] = [];
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', { rateLimitMultiplier: 1000 });
    usdc = await createMint(t.chain, { decimals: 6 });
    marks = await mkdtemp(join(tmpdir(), 'tr-crash-'));
  });
  after(async () => {
    await Promise.all(runs.map((run) => run.stop()));
    await t.close();
    await rm(marks, { recursive: true, force: true });
  });

  test('and started again completes every route: each hop once on chain, each event once in the outbox', async () => {
    assert.deepEqual(new Set(PLANS.flatMap((plan) => plan.points)), new Set(CRASH_POINTS));
    const routes = await deployDueRoutes(
      t,
      caller,
      PLANS.map((plan) => (plan.mint === 'usdc' ? usdc : (SOL_MINT as Address))),
    );
    const plan: Record<number, CrashPoint[]> = Object.fromEntries(
      routes.map((route, i) => [route.id, PLANS[i]!.points]),
    );

    // A worker that dies is replaced at once, until every route is complete. What each run died of
    // (its crash mark) and whether the chain moved past a blockhash's lifetime before it started.
    let died = new Set<string>();
    const deathOf: string[] = [];
    const travelledBefore: boolean[] = [];
    const deadline = Date.now() + 90_000;
    // Done once every route is complete and the running worker started after the last planned
    // death: a hop's last death ('recorded') comes after the route completed.
    const deaths = Object.values(plan).flat().length;
    while (!(await allCompleted(t, routes)) || died.size < deaths) {
      const running = runs.at(-1);
      if (Date.now() > deadline) {
        const said = running?.logs.slice(-20).map((line) => JSON.stringify(line));
        assert.fail(`the routes did not complete; the last worker said:\n${said?.join('\n')}`);
      }
      if (!running || running.child.exitCode !== null || running.child.signalCode !== null) {
        assert.ok(runs.length <= Object.values(plan).flat().length, 'no more restarts than planned deaths');
        const now = new Set(await readdir(marks));
        const fresh = [...now].filter((mark) => !died.has(mark));
        if (runs.length > 0) deathOf.push(fresh[0] ?? '');
        const travel = fresh.some((mark) => mark.split('-')[1] === String(MIDDLE));
        if (travel) {
          const slot = await t.chain.chain.getSlot();
          await t.chain.cheats.timeTravel({ absoluteSlot: Number(slot) + BLOCKHASH_LIFETIME_SLOTS });
        }
        travelledBefore.push(travel);
        died = now;
        runs.push(startCrashingWorker(t, { CRASH_PLAN: JSON.stringify(plan), CRASH_MARKS: marks }));
      }
      await delay(50);
    }
    // Stopped once it is listening for SIGTERM: a worker stopped while it loads is simply killed.
    const last = runs.at(-1)!;
    while (!last.logs.some((line) => line.msg === 'keeper worker started') && Date.now() < deadline) {
      await delay(20);
    }
    assert.deepEqual(await last.stop(), { code: 0, signal: null }, 'the last worker stops cleanly');

    // Every hop of every route died once at its point, each time killing the worker.
    const killed = await Promise.all(runs.slice(0, -1).map((run) => run.exited));
    assert.deepEqual(
      killed.filter((exit) => exit.signal !== 'SIGKILL'),
      [],
      'every worker but the last was killed',
    );
    const expected = routes.flatMap((route) =>
      plan[route.id]!.map((point, step) => `${route.id}-${step}-${point}`),
    );
    assert.deepEqual((await readdir(marks)).sort(), expected.sort(), 'each point of each hop was reached');
    assert.equal(killed.length, expected.length);

    for (const route of routes) await assertCarriedOnce(t, route);

    // What the workers said about each route: a hop's stored bytes were sent again while their
    // blockhash lived, and replaced once it had expired (after a middle hop's death the chain moved
    // past a blockhash's lifetime: a hop stored then by another route's worker expired as well); a
    // hop that landed before its worker died was recorded by the next one, from the chain.
    const logs = runs.flatMap((run) => run.logs);
    const steps = (id: number, msg: RegExp, match: Record<string, unknown>) =>
      logs
        .filter(
          (line) =>
            line.transferId === id &&
            msg.test(String(line.msg)) &&
            Object.entries(match).every(([key, value]) => line[key] === value),
        )
        .map((line) => line.step);
    /** Whether the chain moved past the blockhash of the hop stored at `mark` before a worker sent it again. */
    const expiredBeforeResent = (mark: string) => {
      const [id, step] = mark.split('-').map(Number);
      const death = deathOf.indexOf(mark);
      const next = runs.findIndex(
        (run, index) =>
          index > death &&
          run.logs.some(
            (line) =>
              line.transferId === id && line.step === step && /^hop (sent|retried)$/.test(String(line.msg)),
          ),
      );
      return travelledBefore.slice(death + 1, next + 1).some(Boolean);
    };
    for (const route of routes) {
      const where = (match: (point: CrashPoint, step: number) => boolean) =>
        plan[route.id]!.flatMap((point, step) => (match(point, step) ? [step] : []));
      const stored = (expired: boolean) =>
        where(
          (point, step) =>
            point === 'stored' && expiredBeforeResent(`${route.id}-${step}-stored`) === expired,
        );
      assert.deepEqual(steps(route.id, /^hop sent$/, { resent: true }), stored(false));
      assert.deepEqual(
        steps(route.id, /^hop retried$/, { reason: 'expired before it landed' }),
        stored(true),
      );
      assert.deepEqual(
        steps(route.id, /^hop landed/, { recovered: true }),
        where((point) => point === 'sent' || point === 'landed' || point === 'recording'),
      );
    }
  });
});
