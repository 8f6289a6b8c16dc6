import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_HEADERS, createTestApp, type TestApp } from '../helpers/app.ts';

describe('authentication', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  const usage = (headers: Record<string, string>) =>
    t.app.inject({ method: 'GET', url: '/api/v1/usage', headers });

  test('accepts the key in x-api-key or as a Bearer token', async () => {
    const caller = await t.newCaller();
    assert.equal((await usage({ 'x-api-key': caller.key })).statusCode, 200);
    assert.equal((await usage({ authorization: `Bearer ${caller.key}` })).statusCode, 200);
  });

  test('MH_001 for a missing, malformed or unknown key, with the full envelope', async () => {
    const cases: Record<string, string>[] = [
      {},
      { 'x-api-key': 'nonsense' },
      { authorization: 'Bearer mh_test_0123456789abcdefghijABCDEFGHIJ01' },
      { authorization: 'Basic mh_test_0123456789abcdefghijABCDEFGHIJ01' },
    ];
    for (const headers of cases) {
      const response = await usage({ ...headers, 'x-request-id': 'client-req-0001' });
      assert.equal(response.statusCode, 401, JSON.stringify(headers));
      const body = response.json();
      assert.equal(body.error.code, 'MH_001');
      assert.equal(body.error.requestId, 'client-req-0001');
      assert.equal(response.headers['x-request-id'], 'client-req-0001');
      assert.ok(body.error.message.length > 10);
    }
  });

  test('a key of the wrong mode prefix never matches a stored key', async () => {
    const caller = await t.newCaller('test');
    const swapped = caller.key.replace('mh_test_', 'mh_live_');
    assert.equal((await usage({ 'x-api-key': swapped })).json().error.code, 'MH_001');
  });

  test('MH_002 once a key is revoked, immediately despite the auth cache', async () => {
    const caller = await t.newCaller();
    assert.equal((await usage(caller.headers)).statusCode, 200);
    const revoke = await t.app.inject({
      method: 'POST',
      url: `/admin/v1/keys/${caller.keyId}/revoke`,
      headers: ADMIN_HEADERS,
    });
    assert.equal(revoke.json().revokedAt, '2026-06-01T12:00:00.000Z');
    // The NOTIFY that clears caches is delivered asynchronously after commit.
    await waitFor(async () => (await usage(caller.headers)).statusCode === 401);
    const response = await usage(caller.headers);
    assert.equal(response.json().error.code, 'MH_002');
  });

  test('MH_003 while the integration is suspended, and access again after resume', async () => {
    const caller = await t.newCaller();
    assert.equal((await usage(caller.headers)).statusCode, 200);
    await t.app.inject({
      method: 'POST',
      url: `/admin/v1/integrations/${caller.integrationId}/suspend`,
      headers: ADMIN_HEADERS,
    });
    await waitFor(async () => (await usage(caller.headers)).statusCode === 403);
    assert.equal((await usage(caller.headers)).json().error.code, 'MH_003');
    await t.app.inject({
      method: 'POST',
      url: `/admin/v1/integrations/${caller.integrationId}/resume`,
      headers: ADMIN_HEADERS,
    });
    await waitFor(async () => (await usage(caller.headers)).statusCode === 200);
  });

  test('a key’s use is recorded to the minute, as the admin API lists it', async () => {
    const caller = await t.newCaller();
    const lastUsed = async () =>
      (
        await t.app.inject({
          method: 'GET',
          url: `/admin/v1/integrations/${caller.integrationId}/keys`,
          headers: ADMIN_HEADERS,
        })
      ).json().items[0].lastUsedAt;
    assert.equal(await lastUsed(), null, 'never used');
    const first = t.clock.now().toISOString();
    assert.equal((await usage(caller.headers)).statusCode, 200);
    assert.equal(await lastUsed(), first);
    t.clock.advance(59_000);
    assert.equal((await usage(caller.headers)).statusCode, 200);
    assert.equal(await lastUsed(), first, 'within the minute, not written again');
    t.clock.advance(1_000);
    assert.equal((await usage(caller.headers)).statusCode, 200);
    assert.equal(await lastUsed(), t.clock.now().toISOString());
    const usedAt = t.clock.now().toISOString();
    await t.app.inject({
      method: 'POST',
      url: `/admin/v1/keys/${caller.keyId}/revoke`,
      headers: ADMIN_HEADERS,
    });
    t.clock.advance(60_000);
    assert.equal((await usage(caller.headers)).statusCode, 401);
    assert.equal(await lastUsed(), usedAt, 'a refused request is no use of the key');
  });

  test('the key mode sets isTestMode and a request id is generated when none is sent', async () => {
    const live = await t.newCaller('live');
    const response = await usage(live.headers);
    assert.equal(response.json().isTestMode, false);
    assert.match(String(response.headers['x-request-id']), /^req_[0-9a-f]{16}[0-9a-z]{8}$/);
    const test = await t.newCaller('test');
    assert.equal((await usage(test.headers)).json().isTestMode, true);
  });
});

describe('a pool of one connection', () => {
  test('is enough: caches follow notifications on a connection of their own', async () => {
    const t = await createTestApp({ poolSize: 1 });
    try {
      const caller = await t.newCaller();
      const responses = await Promise.all(Array.from({ length: 5 }, () => caller.get('/api/v1/usage')));
      assert.deepEqual(
        responses.map((response) => response.statusCode),
        [200, 200, 200, 200, 200],
      );
      await t.app.inject({
        method: 'POST',
        url: `/admin/v1/keys/${caller.keyId}/revoke`,
        headers: ADMIN_HEADERS,
      });
      await waitFor(async () => (await caller.get('/api/v1/usage')).statusCode === 401);
    } finally {
      await t.close();
    }
  });
});

/** Polls until `condition` holds (for effects of asynchronous notifications), failing after 2 s. */
async function waitFor(condition: () => Promise<boolean>) {
  const deadline = Date.now() + 2_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not reached within 2 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
