import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type Address, generateKeyPairSigner } from '@solana/kit';
import { Redis } from 'ioredis';
import {
  isTransferRouterError,
  type RetryNotice,
  TransferRouterError,
} from '../../clients/typescript/src/index.ts';
import { createPostgresDb, type Db } from '../../src/store/db.ts';
import { type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { clientFor, listen } from './helpers.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

// Rate limits counted in Redis, so that a test can let the 60 s window pass by removing its
// counters instead of waiting for it.
describe('the client retries what the service asks it to retry', () => {
  let redis: Redis;
  let t: TestApp;
  let baseUrl: string;
  let mint: Address;
  const namespace = `test-rl-${randomBytes(6).toString('hex')}`;
  before(async () => {
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    t = await createTestApp({ redis, rateLimitNamespace: namespace });
    baseUrl = await listen(t);
    mint = await createMint(t.chain, { decimals: 6 });
  });
  after(async () => {
    await t.close();
    const keys = await redis.keys(`${namespace}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  /** The window of every rate limit of this app passes. */
  const windowPasses = async () => {
    const keys = await redis.keys(`${namespace}:*`);
    if (keys.length > 0) await redis.del(...keys);
  };

  const createBody = async () => ({
    tokenMint: mint,
    amountRaw: '25000000',
    amountTokens: '25',
    sourceOwner: (await generateKeyPairSigner()).address,
    recipientWallet: (await generateKeyPairSigner()).address,
    hops: 3,
    tokenPriceUsd: 1,
  });

  /** A fresh key whose create limit (10 a minute) is used up. */
  async function exhaustedCaller(): Promise<Caller> {
    const caller = await t.newCaller();
    const client = clientFor(baseUrl, caller, { maxRetries: 0 });
    for (let index = 0; index < 10; index++) await client.createTransfer(await createBody());
    return caller;
  }

  test('MH_004: waits Retry-After, then sends the same request with the same Idempotency-Key once', async () => {
    const caller = await exhaustedCaller();
    const notices: RetryNotice[] = [];
    const waits: number[] = [];
    const sent: string[] = [];
    const client = clientFor(baseUrl, caller, {
      onRetry: (notice) => notices.push(notice),
      sleep: async (ms) => {
        waits.push(ms);
        await windowPasses();
      },
      fetch: (request) => {
        if (request.method === 'POST') sent.push(request.headers.get('idempotency-key') ?? '');
        return fetch(request);
      },
    });
    const created = await client.createTransfer(await createBody());
    assert.equal(created.status, 'quote');
    assert.equal(notices.length, 1);
    assert.equal(notices[0]!.code, 'MH_004');
    assert.equal(notices[0]!.attempt, 1);
    assert.equal(notices[0]!.method, 'POST');
    assert.equal(notices[0]!.url, `${baseUrl}/api/v1/transfers`);
    // Retry-After is whole seconds until the window resets: at most 60.
    assert.deepEqual(waits, [notices[0]!.delayMs]);
    assert.ok(waits[0]! >= 1_000 && waits[0]! <= 60_000 && waits[0]! % 1_000 === 0, `waited ${waits[0]} ms`);
    assert.equal(sent.length, 2);
    assert.equal(sent[0], sent[1], 'the retry carries the first attempt’s Idempotency-Key');
    const listed = await client.listTransfers();
    assert.equal(listed.pagination.total, 11, 'the limited attempt created nothing');
  });

  test('MH_004 without retries, or with a Retry-After beyond the longest wait, is thrown with its details', async () => {
    const caller = await exhaustedCaller();
    for (const options of [{ maxRetries: 0 }, { maxRetryDelayMs: 500 }]) {
      const error = await clientFor(baseUrl, caller, options)
        .createTransfer(await createBody())
        .catch((caught: unknown) => caught);
      assert.ok(error instanceof TransferRouterError);
      assert.ok(isTransferRouterError(error, 'MH_004'));
      assert.equal(error.status, 429);
      assert.ok(error.retryAfterSeconds! >= 1 && error.retryAfterSeconds! <= 60);
      assert.match(error.message, /^MH_004: Rate limit of 10 requests per 60 s exceeded/);
    }
  });

  test('MH_072: a request whose key is still in use by a running one is retried, and gets that one’s answer', async () => {
    const caller = await t.newCaller();
    const setup = clientFor(baseUrl, caller);
    const source = await generateKeyPairSigner();
    await t.chain.cheats.airdrop(source.address, 10_000_000_000n);
    await t.chain.cheats.setTokenAccount(source.address, mint, { amount: 25_000_000n });
    const { id } = await setup.createTransfer({ ...(await createBody()), sourceOwner: source.address });
    await setup.prepareTransfer(id);

    // funding/confirm holds its key while it watches the chain (1 s here, for a route nobody
    // broadcasts), so a second request with the same key meets it in progress.
    let firstAnswered!: () => void;
    const answered = new Promise<void>((resolve) => {
      firstAnswered = resolve;
    });
    const notices: RetryNotice[] = [];
    const client = clientFor(baseUrl, caller, {
      onRetry: (notice) => notices.push(notice),
      sleep: () => answered,
      fetch: async (request) => {
        const response = await fetch(request);
        if (response.status === 408) firstAnswered();
        return response;
      },
    });
    const call = { idempotencyKey: `confirm-${randomBytes(8).toString('hex')}` };
    const results = await Promise.allSettled([
      client.confirmFunding(id, { timeoutSeconds: 1 }, call),
      client.confirmFunding(id, { timeoutSeconds: 1 }, call),
    ]);
    for (const result of results) {
      assert.equal(result.status, 'rejected');
      assert.ok(isTransferRouterError(result.reason, 'MH_032'), String(result.reason));
    }
    assert.deepEqual(
      notices.map((notice) => [notice.code, notice.attempt, notice.delayMs]),
      [['MH_072', 1, 500]],
    );
  });
});

describe('the client retries MH_091 while a dependency is down', () => {
  test('after Retry-After, the same request succeeds once the database is back', async () => {
    const unreachable = createPostgresDb({ url: 'postgres://postgres@127.0.0.1:1/none', poolSize: 1 });
    let outage = false;
    // During the outage every query goes to a server that is not there.
    const t = await createTestApp({
      wrapDb: (db: Db): Db => ({
        ...db,
        query: (text, params) => (outage ? unreachable : db).query(text, params),
        transaction: (fn) => (outage ? unreachable : db).transaction(fn),
      }),
    });
    try {
      const caller = await t.newCaller();
      const waits: number[] = [];
      const notices: RetryNotice[] = [];
      const client = clientFor(await listen(t), caller, {
        onRetry: (notice) => notices.push(notice),
        sleep: async (ms) => {
          waits.push(ms);
          outage = false;
        },
      });
      await client.getUsage(); // the key is known (and cached) before the outage
      outage = true;
      const usage = await client.getUsage();
      assert.equal(usage.totalTransfers, 0);
      assert.deepEqual(waits, [5_000], 'Retry-After: 5');
      assert.deepEqual(
        notices.map((notice) => [notice.code, notice.method]),
        [['MH_091', 'GET']],
      );
    } finally {
      await unreachable.close();
      await t.close();
    }
  });
});
