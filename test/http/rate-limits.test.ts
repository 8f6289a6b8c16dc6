import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { RATE_LIMITS } from '../../src/http/rate-limit.ts';
import { callerFor, createTestApp, type TestApp } from '../helpers/app.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const namespace = () => `test-rl-${randomBytes(6).toString('hex')}`;

/** Exhausts one endpoint for one key; another endpoint and another key of the same integration still pass. */
async function assertPerEndpointAndKey(t: TestApp) {
  const caller = await t.newCaller();
  for (let index = 0; index < 30; index++) await caller.get('/api/v1/usage');
  assert.equal((await caller.get('/api/v1/usage')).statusCode, 429);
  assert.equal((await caller.get('/api/v1/webhooks')).statusCode, 200, 'another endpoint has its own budget');
  assert.equal(
    (await caller.get('/api/v1/transfers/1')).statusCode,
    404,
    'another route under the same path prefix has its own budget',
  );
  const sibling = callerFor(t.app, caller.integrationId, await t.createKey(caller.integrationId));
  assert.equal((await sibling.get('/api/v1/usage')).statusCode, 200, 'another key has its own budget');
}

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

  test('limits are per endpoint and per key', () => assertPerEndpointAndKey(t));

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
      ['prepare', 'POST', '/api/v1/transfers/1/prepare'],
      ['confirmBroadcast', 'POST', '/api/v1/transfers/1/confirm-broadcast'],
      ['fundingRefresh', 'POST', '/api/v1/transfers/1/funding/refresh'],
      ['fundingConfirm', 'POST', '/api/v1/transfers/1/funding/confirm'],
      ['rescuePrepare', 'POST', '/api/v1/transfers/1/rescue/prepare'],
      ['rescueConfirm', 'POST', '/api/v1/transfers/1/rescue/confirm'],
      ['reclaimPrepare', 'POST', '/api/v1/transfers/1/reclaim-rent/prepare'],
      ['reclaimConfirm', 'POST', '/api/v1/transfers/1/reclaim-rent/confirm'],
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
      ['rewards', 'GET', '/api/v1/rewards'],
      ['rewardClaims', 'GET', '/api/v1/rewards/claims'],
      ['rewardsWallet', 'POST', '/api/v1/rewards/wallet'],
      ['rewardsClaim', 'POST', '/api/v1/rewards/claim'],
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

  test('a burst is exact: 40 at once, 30 allowed, each position once', async () => {
    const t = await createTestApp({ redis, rateLimitNamespace: namespace() });
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

  test('limits are per endpoint and per key', async () => {
    const t = await createTestApp({ redis, rateLimitNamespace: namespace() });
    try {
      await assertPerEndpointAndKey(t);
    } finally {
      await t.close();
    }
  });

  test('two processes sharing Redis, requests from both at once: exactly the limit admitted, each position once', async () => {
    const shared = namespace();
    const first = await createTestApp({ redis, rateLimitNamespace: shared });
    const second = await createTestApp({ redis, rateLimitNamespace: shared, database: first.database });
    try {
      // 30 per minute times 10: 300.
      const caller = await first.newCaller('test', { rateLimitMultiplier: 10 });
      const onSecond = callerFor(second.app, caller.integrationId, { id: caller.keyId, key: caller.key });
      const responses = await Promise.all(
        Array.from({ length: 400 }, (_, index) =>
          (index % 2 === 0 ? caller : onSecond).get('/api/v1/webhooks'),
        ),
      );
      const allowed = responses.filter((response) => response.statusCode === 200);
      const refused = responses.filter((response) => response.statusCode === 429);
      assert.equal(allowed.length, 300);
      assert.equal(refused.length, 100);
      assert.ok(refused.every((response) => response.json().error.code === 'MH_004'));
      assert.deepEqual(
        allowed.map((response) => Number(response.headers['ratelimit-remaining'])).sort((a, b) => a - b),
        Array.from({ length: 300 }, (_, index) => index),
        'each position of the limit handed out exactly once over both processes',
      );
      // One counter per deployment, endpoint and key, which every request incremented.
      assert.equal(await redis.get(`${shared}:GET/api/v1/webhooks-${caller.keyId}`), '400');
    } finally {
      await second.close();
      await first.close();
    }
  });

  test('two processes sharing Redis enforce one budget', async () => {
    const shared = namespace();
    const first = await createTestApp({ redis, rateLimitNamespace: shared });
    const second = await createTestApp({ redis, rateLimitNamespace: shared, database: first.database });
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

  test('two deployments with their own namespaces on one Redis do not share counters', async () => {
    // One database for both, so that the same key has the same id in each: only the namespace
    // keeps their counters apart.
    const first = await createTestApp({ redis, rateLimitNamespace: namespace() });
    const second = await createTestApp({ redis, rateLimitNamespace: namespace(), database: first.database });
    try {
      const caller = await first.newCaller();
      const onSecond = callerFor(second.app, caller.integrationId, { id: caller.keyId, key: caller.key });
      for (let index = 0; index < 30; index++)
        assert.equal((await caller.get('/api/v1/webhooks')).statusCode, 200);
      assert.equal((await caller.get('/api/v1/webhooks')).statusCode, 429);
      const other = await onSecond.get('/api/v1/webhooks');
      assert.equal(other.statusCode, 200);
      assert.equal(other.headers['ratelimit-remaining'], '29');
    } finally {
      await second.close();
      await first.close();
    }
  });

  test('with Redis unreachable, requests are served without limits rather than refused', async () => {
    // The service's client options: no queueing while disconnected, so a command fails at once.
    const unreachable = new Redis('redis://127.0.0.1:1', {
      maxRetriesPerRequest: 1,
      connectTimeout: 1_000,
      enableOfflineQueue: false,
      lazyConnect: true,
      retryStrategy: () => null,
    });
    unreachable.on('error', () => {});
    const t = await createTestApp({ redis: unreachable, rateLimitNamespace: namespace() });
    try {
      const caller = await t.newCaller();
      // Past the limit of 30: nothing counts while Redis cannot be reached.
      for (let index = 0; index < 35; index++) {
        const response = await caller.get('/api/v1/webhooks');
        assert.equal(response.statusCode, 200, response.body);
        assert.deepEqual(response.json(), { items: [] });
        assert.equal(response.headers['ratelimit-limit'], '30');
      }
    } finally {
      await t.close();
      unreachable.disconnect();
    }
  });
});
