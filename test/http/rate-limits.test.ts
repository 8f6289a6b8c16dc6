import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { RATE_LIMITS } from '../../src/http/rate-limit.ts';
import { callerFor, createTestApp, type TestApp } from '../helpers/app.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('rate limits in process', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  test('each response carries RateLimit headers; request 31 of GET /webhooks is MH_004 with Retry-After', async () => {
    const caller = await t.newCaller();
    for (let index = 1; index <= 30; index++) {
      const response = await caller.get('/api/v1/webhooks');
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['ratelimit-limit'], '30');
      assert.equal(response.headers['ratelimit-remaining'], String(30 - index));
      const reset = Number(response.headers['ratelimit-reset']);
      assert.ok(reset > 0 && reset <= 60, `reset ${reset}`);
    }
    const limited = await caller.get('/api/v1/webhooks');
    assert.equal(limited.statusCode, 429);
    const body = limited.json();
    assert.equal(body.error.code, 'MH_004');
    assert.equal(body.error.requestId, limited.headers['x-request-id']);
    assert.match(body.error.message, /30 requests per 60 s exceeded for GET \/api\/v1\/webhooks/);
    const retryAfter = Number(limited.headers['retry-after']);
    assert.ok(retryAfter > 0 && retryAfter <= 60);
    assert.equal(limited.headers['ratelimit-remaining'], '0');
  });

  test('limits are per endpoint and per key', async () => {
    const caller = await t.newCaller();
    for (let index = 0; index < 30; index++) await caller.get('/api/v1/usage');
    assert.equal((await caller.get('/api/v1/usage')).statusCode, 429);
    assert.equal(
      (await caller.get('/api/v1/webhooks')).statusCode,
      200,
      'another endpoint has its own budget',
    );
    const sibling = callerFor(t.app, caller.integrationId, await t.createKey(caller.integrationId));
    assert.equal((await sibling.get('/api/v1/usage')).statusCode, 200, 'another key has its own budget');
  });

  test('an integration with a raised rate limit gets its multiple', async () => {
    const caller = await t.newCaller('test', { rateLimitMultiplier: 3 });
    const response = await caller.get('/api/v1/webhooks');
    assert.equal(response.headers['ratelimit-limit'], '90');
    assert.equal(response.headers['ratelimit-remaining'], '89');
  });

  test('every endpoint has its number of the spec or the decisions', async () => {
    const caller = await t.newCaller();
    const endpoints: [keyof typeof RATE_LIMITS, 'GET' | 'POST' | 'DELETE', string][] = [
      ['createTransfer', 'POST', '/api/v1/transfers'],
      ['estimate', 'POST', '/api/v1/transfers/estimate'],
      ['getTransfer', 'GET', '/api/v1/transfers/1'],
      ['listTransfers', 'GET', '/api/v1/transfers'],
      ['getTransferByExternalId', 'GET', '/api/v1/transfers/by-external/x'],
      ['createWebhook', 'POST', '/api/v1/webhooks'],
      ['listWebhooks', 'GET', '/api/v1/webhooks'],
      ['deleteWebhook', 'DELETE', '/api/v1/webhooks/1'],
      ['webhookDeliveries', 'GET', '/api/v1/webhooks/1/deliveries'],
      ['testWebhook', 'POST', '/api/v1/webhooks/1/test'],
      ['rotateWebhookSecret', 'POST', '/api/v1/webhooks/1/rotate-secret'],
      ['enableWebhook', 'POST', '/api/v1/webhooks/1/enable'],
      ['listEvents', 'GET', '/api/v1/events'],
      ['resendEvent', 'POST', '/api/v1/events/evt_x/resend'],
      ['usage', 'GET', '/api/v1/usage'],
    ];
    assert.deepEqual(endpoints.map(([name]) => name).sort(), Object.keys(RATE_LIMITS).sort());
    for (const [name, method, url] of endpoints) {
      const response = await t.app.inject({
        method,
        url,
        headers: { ...caller.headers, 'idempotency-key': `limits-${name}` },
      });
      assert.equal(response.headers['ratelimit-limit'], String(RATE_LIMITS[name]), `${method} ${url}`);
    }
    assert.deepEqual(
      {
        createTransfer: RATE_LIMITS.createTransfer,
        estimate: RATE_LIMITS.estimate,
        getTransfer: RATE_LIMITS.getTransfer,
      },
      { createTransfer: 10, estimate: 30, getTransfer: 60 },
    );
  });

  test('the spec numbers apply: GET /transfers/{id} 60, POST /transfers 10', async () => {
    const caller = await t.newCaller();
    const get = await caller.get('/api/v1/transfers/1');
    assert.equal(get.headers['ratelimit-limit'], '60');
    assert.equal(get.statusCode, 404, 'headers also on error responses');
    const create = await caller.post('/api/v1/transfers', {});
    assert.equal(create.headers['ratelimit-limit'], '10');
    assert.equal(create.statusCode, 400);
  });
});

describe('rate limits shared through Redis', () => {
  let redis: Redis;
  before(() => {
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  });
  after(() => redis.quit());

  test('a burst counted in batches is still exact: 40 at once, 30 allowed, each position once', async () => {
    const t = await createTestApp({
      redis,
      rateLimitNamespace: `test-rl-${randomBytes(6).toString('hex')}:`,
    });
    try {
      const caller = await t.newCaller();
      const responses = await Promise.all(Array.from({ length: 40 }, () => caller.get('/api/v1/webhooks')));
      const allowed = responses.filter((response) => response.statusCode === 200);
      assert.equal(allowed.length, 30);
      assert.equal(responses.filter((response) => response.statusCode === 429).length, 10);
      const remaining = allowed
        .map((response) => Number(response.headers['ratelimit-remaining']))
        .sort((a, b) => a - b);
      assert.deepEqual(
        remaining,
        Array.from({ length: 30 }, (_, index) => index),
      );
    } finally {
      await t.close();
    }
  });

  test('a busy key reserves positions ahead: few Redis calls, and two processes hand out each position of the limit once', async () => {
    const namespace = `test-rl-${randomBytes(6).toString('hex')}:`;
    const first = await createTestApp({ redis, rateLimitNamespace: namespace });
    const second = await createTestApp({ redis, rateLimitNamespace: namespace, database: first.database });
    const monitor = await redis.monitor();
    let redisCalls = 0;
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0]?.toLowerCase().startsWith('eval') && args.some((arg) => arg.startsWith(namespace)))
        redisCalls++;
    });
    try {
      // 30 per minute times 100: 3,000, so a reservation holds at most 30 positions.
      const caller = await first.newCaller('test', { rateLimitMultiplier: 100 });
      const onSecond = callerFor(second.app, caller.integrationId, { id: caller.keyId, key: caller.key });
      // Every admitted request's position in the window, as RateLimit-Remaining tells it.
      const remaining: number[] = [];
      const get = async (on: typeof caller) => {
        const response = await on.get('/api/v1/webhooks');
        if (response.statusCode === 200) remaining.push(Number(response.headers['ratelimit-remaining']));
        return response.statusCode === 200;
      };
      // One request at a time, so no two share a turn of the event loop (and an increment); the
      // calls are counted once the key's rate is known and the process is warm.
      let callsBefore = 0;
      for (let index = 0; index < 900; index++) {
        if (index === 300) callsBefore = redisCalls;
        assert.ok(await get(caller));
      }
      const calls = redisCalls - callsBefore;
      assert.ok(calls < 600 / 2, `${calls} Redis calls for 600 requests`);

      // The second process takes what is left; then the first still has its unused reservation.
      for (const on of [onSecond, caller]) {
        for (let admitted = -1; admitted !== 0; ) {
          const wave = await Promise.all(Array.from({ length: 50 }, () => get(on)));
          admitted = wave.filter(Boolean).length;
        }
      }
      assert.deepEqual(
        remaining.sort((a, b) => a - b),
        Array.from({ length: 3000 }, (_, index) => index),
        'each position of the limit handed out exactly once over both processes',
      );
    } finally {
      monitor.disconnect();
      await second.close();
      await first.close();
    }
  });

  test('two processes sharing Redis enforce one budget', async () => {
    const namespace = `test-rl-${randomBytes(6).toString('hex')}:`;
    const first = await createTestApp({ redis, rateLimitNamespace: namespace });
    const second = await createTestApp({ redis, rateLimitNamespace: namespace, database: first.database });
    try {
      const caller = await first.newCaller();
      const onSecond = callerFor(second.app, caller.integrationId, { id: caller.keyId, key: caller.key });
      for (let index = 0; index < 20; index++)
        assert.equal((await caller.get('/api/v1/webhooks')).statusCode, 200);
      for (let index = 0; index < 10; index++) {
        const response = await onSecond.get('/api/v1/webhooks');
        assert.equal(response.statusCode, 200);
        assert.equal(response.headers['ratelimit-remaining'], String(9 - index));
      }
      const limited = await onSecond.get('/api/v1/webhooks');
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.json().error.code, 'MH_004');
      assert.ok(Number(limited.headers['retry-after']) > 0);
      assert.equal((await caller.get('/api/v1/webhooks')).statusCode, 429);
    } finally {
      await second.close();
      await first.close();
    }
  });
});
