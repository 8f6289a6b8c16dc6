// Several keeper workers on one PostgreSQL database: they share the due routes, each hop claimed
// and sent by exactly one of them; workers alone (`npm run worker`) serve the keeper's metrics.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Address } from '@solana/kit';
import { pino } from 'pino';
import { createRpcChain } from '../../src/chain/rpc-chain.ts';
import { generatePlatformKeys } from '../../src/platform/local-keys.ts';
import { priorityFeePolicy } from '../../src/platform/platform.ts';
import { createPostgresDb } from '../../src/store/db.ts';
import { createStore } from '../../src/store/index.ts';
import { createSecretBox } from '../../src/store/secret-box.ts';
import { startWorkerPresence } from '../../src/store/worker-processes.ts';
import { createKeeperWorker } from '../../src/workers/keeper.ts';
import { type Caller, createTestApp, ENCRYPTION_KEY, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { startServiceProcess } from '../helpers/process.ts';
import { allCompleted, assertCarriedOnce, type DeployedRoute, deployDueRoutes } from './helpers.ts';
import { waitUntil, workerProcessEnv } from './worker-process.ts';

/** Every hop of the routes, as `transfer/step`. */
const hopsOf = (routes: readonly DeployedRoute[]) =>
  routes.flatMap((route) => Array.from({ length: route.hops }, (_, step) => `${route.id}/${step}`)).sort();

describe('two keeper workers on one database', () => {
  const keys = generatePlatformKeys();
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  before(async () => {
    t = await createTestApp({ platform: { keys } });
    caller = await t.newCaller('test', { rateLimitMultiplier: 1000 });
    usdc = await createMint(t.chain, { decimals: 6 });
  });
  after(() => t.close());

  /**
   * A keeper worker with its own connection pool and chain client, as another process has, that
   * notes each hop it claims and each transaction it sends.
   */
  async function keeperWorker() {
    const db = createPostgresDb({ url: t.database.url, poolSize: 4 });
    const presence = await startWorkerPresence(db, pino({ level: 'silent' }));
    const store = createStore(db, { idempotencyTtlMs: 3_600_000, secrets: createSecretBox(ENCRYPTION_KEY) });
    const chain = createRpcChain({ rpcUrl: t.chain.rpcUrl });
    const claimed: string[] = [];
    const sent: string[] = [];
    const worker = createKeeperWorker({
      worker: presence.id,
      db,
      listen: db,
      chain: {
        ...chain,
        async sendTransaction(transaction, options) {
          const signature = await chain.sendTransaction(transaction, options);
          sent.push(signature);
          return signature;
        },
      },
      hops: {
        ...store.hops,
        async claimDue(input) {
          const routes = await store.hops.claimDue(input);
          claimed.push(...routes.map(({ transfer }) => `${transfer.id}/${transfer.hopsCompleted}`));
          return routes;
        },
      },
      transfers: store.transfers,
      programAddress: t.platform.programAddress,
      priorityFees: priorityFeePolicy(t.platform, 0n),
      screen: async () => {
        throw new Error('these routes are not screened');
      },
      clock: t.clock,
      pollMs: 20,
      concurrency: 3,
      maxSleepMs: 100,
      log: pino({ level: 'silent' }),
    });
    return { worker, claimed, sent, close: () => presence.stop().then(() => db.close()) };
  }

  test('many due routes: every hop claimed once and sent once, by one worker or the other; all complete', async () => {
    const routes = await deployDueRoutes(
      t,
      caller,
      Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? (SOL_MINT as Address) : usdc)),
    );
    const workers = [await keeperWorker(), await keeperWorker()];
    for (const { worker } of workers) worker.start();
    try {
      await waitUntil(() => allCompleted(t, routes), 'every route completed', 60_000);
    } finally {
      for (const { worker, close } of workers) await worker.stop().then(close);
    }

    const [a, b] = workers as [
      Awaited<ReturnType<typeof keeperWorker>>,
      Awaited<ReturnType<typeof keeperWorker>>,
    ];
    assert.deepEqual([...a.claimed, ...b.claimed].sort(), hopsOf(routes), 'each hop claimed once');
    assert.ok(a.claimed.length > 0 && b.claimed.length > 0, 'both workers took hops');
    const sent = [...a.sent, ...b.sent];
    assert.equal(sent.length, hopsOf(routes).length, 'one transaction sent per hop');
    assert.equal(new Set(sent).size, sent.length, 'no transaction sent twice');
    for (const route of routes) await assertCarriedOnce(t, route);
  });

  test('two `npm run worker` processes carry the routes, log each hop with its transfer id once, and serve the keeper metrics', async () => {
    const env = {
      ...workerProcessEnv(t, keys),
      // The processes go by the system's clock, months after the test's: housekeeping would
      // otherwise delete the transfers' events as too old.
      EVENT_RETENTION_DAYS: '3650',
    };
    // Deployed first, for the same reason: the processes' expiry and housekeeping would take the
    // test's quotes and idempotency records for long expired.
    const routes = await deployDueRoutes(t, caller, [usdc, SOL_MINT as Address, usdc, SOL_MINT as Address]);
    const workers = await Promise.all([
      startServiceProcess(env, { workersOnly: true }),
      startServiceProcess(env, { workersOnly: true }),
    ]);
    try {
      await waitUntil(() => allCompleted(t, routes), 'every route completed', 60_000);
      for (const route of routes) await assertCarriedOnce(t, route);

      const landed = workers
        .flatMap((worker) => worker.logs)
        .flatMap((line) => (line.startsWith('{') ? [JSON.parse(line)] : []))
        .filter((line) => String(line.msg).startsWith('hop landed'))
        .map((line) => `${line.transferId}/${line.step}`);
      assert.deepEqual(landed.sort(), hopsOf(routes), 'one log line per hop, with its transfer id');

      const metrics = await Promise.all(
        workers.map(async (worker) => {
          const response = await fetch(worker.url);
          assert.equal(response.status, 200);
          assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
          return response.text();
        }),
      );
      const sum = (pattern: RegExp) =>
        metrics.reduce((total, text) => total + Number(pattern.exec(text)?.[1] ?? 0), 0);
      assert.equal(sum(/^keeper_hops_total\{outcome="landed"\} (\d+)$/m), hopsOf(routes).length);
      assert.equal(sum(/^keeper_hop_lateness_seconds_count (\d+)$/m), hopsOf(routes).length);
      for (const text of metrics) assert.match(text, /^keeper_low_balance_total \d+$/m);
    } finally {
      const stopped = await Promise.all(workers.map((worker) => worker.stop()));
      assert.deepEqual(stopped, [0, 0], 'both stop cleanly');
    }
  });
});
