import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_HEADERS, createTestApp, type TestApp } from '../helpers/app.ts';

describe('admin API', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  const admin = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    t.app.inject({ method, url, headers: ADMIN_HEADERS, ...(payload ? { payload } : {}) });

  test('creates an integration with default settings and reads it back with its keys', async () => {
    const created = await admin('POST', '/admin/v1/integrations', { name: 'Acme Wallet' });
    assert.equal(created.statusCode, 200);
    const body = created.json();
    assert.deepEqual(body, {
      id: body.id,
      name: 'Acme Wallet',
      status: 'active',
      settings: { defaultHops: 7, defaultArrivalSeconds: 600, rateLimitMultiplier: 1, fees: {} },
      createdAt: '2026-06-01T12:00:00.000Z',
      updatedAt: '2026-06-01T12:00:00.000Z',
    });
    const [{ rows }] = [
      await t.database.db.query('SELECT name, settings FROM integrations WHERE id = $1', [body.id]),
    ];
    assert.deepEqual(rows, [{ name: 'Acme Wallet', settings: {} }]);

    const key = await admin('POST', `/admin/v1/integrations/${body.id}/keys`, { mode: 'live' });
    assert.equal(key.statusCode, 200);
    const keyBody = key.json();
    assert.match(keyBody.key, /^mh_live_[0-9A-Za-z]{32}$/);
    assert.deepEqual(Object.keys(keyBody).sort(), [
      'createdAt',
      'id',
      'integrationId',
      'key',
      'mode',
      'warning',
    ]);
    assert.equal(keyBody.mode, 'live');
    // The test app runs on a local chain, where live mode deserves a word.
    assert.equal(
      keyBody.warning,
      'a live API key on a local chain (cluster localnet): its transfers count as live in usage and rewards, yet move tokens that exist only on this chain; use test keys here, and live keys on mainnet',
    );
    const testKey = await admin('POST', `/admin/v1/integrations/${body.id}/keys`, { mode: 'test' });
    assert.deepEqual(Object.keys(testKey.json()).sort(), ['createdAt', 'id', 'integrationId', 'key', 'mode']);

    const read = await admin('GET', `/admin/v1/integrations/${body.id}`);
    assert.equal(read.statusCode, 200);
    assert.deepEqual(read.json().keys, [
      {
        id: keyBody.id,
        integrationId: body.id,
        mode: 'live',
        hint: `mh_live_...${keyBody.key.slice(-4)}`,
        createdAt: '2026-06-01T12:00:00.000Z',
        revokedAt: null,
        lastUsedAt: null,
      },
      {
        id: testKey.json().id,
        integrationId: body.id,
        mode: 'test',
        hint: `mh_test_...${testKey.json().key.slice(-4)}`,
        createdAt: '2026-06-01T12:00:00.000Z',
        revokedAt: null,
        lastUsedAt: null,
      },
    ]);
    // Only the hash is stored: the key appears nowhere in the database.
    const stored = await t.database.db.query<{ key_hash: Buffer; key_hint: string }>(
      'SELECT key_hash, key_hint FROM api_keys WHERE id = $1',
      [keyBody.id],
    );
    assert.equal(stored.rows[0]!.key_hash.length, 32);
    assert.ok(!JSON.stringify(stored.rows).includes(keyBody.key.slice(8)));
  });

  test('patches settings, removes an override with null and validates values', async () => {
    const { id } = (
      await admin('POST', '/admin/v1/integrations', { name: 'Patchy', settings: { defaultHops: 4 } })
    ).json();
    const patched = await admin('PATCH', `/admin/v1/integrations/${id}`, {
      settings: { defaultArrivalSeconds: 900, fees: { integratorShareBps: 5000 } },
    });
    assert.equal(patched.statusCode, 200);
    assert.deepEqual(patched.json().settings, {
      defaultHops: 4,
      defaultArrivalSeconds: 900,
      rateLimitMultiplier: 1,
      fees: { integratorShareBps: 5000 },
    });
    const reset = await admin('PATCH', `/admin/v1/integrations/${id}`, { settings: { defaultHops: null } });
    assert.equal(reset.json().settings.defaultHops, 7);

    const invalid = await admin('PATCH', `/admin/v1/integrations/${id}`, { settings: { defaultHops: 11 } });
    assert.equal(invalid.statusCode, 400);
    assert.equal(invalid.json().error.code, 'MH_016');
    assert.equal(invalid.json().error.param, 'settings.defaultHops');
    const unknown = await admin('PATCH', `/admin/v1/integrations/${id}`, { settings: { colour: 'blue' } });
    assert.equal(unknown.statusCode, 400);
    assert.equal(unknown.json().error.param, 'settings.colour');
  });

  test('suspends, resumes and 404s unknown integrations and keys', async () => {
    const { id } = (await admin('POST', '/admin/v1/integrations', { name: 'Pausable' })).json();
    assert.equal((await admin('POST', `/admin/v1/integrations/${id}/suspend`)).json().status, 'suspended');
    assert.equal((await admin('POST', `/admin/v1/integrations/${id}/resume`)).json().status, 'active');
    const missing = await admin('POST', '/admin/v1/integrations/999999/suspend');
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().error.code, 'MH_016');
    const missingKey = await admin('POST', '/admin/v1/keys/999999/revoke');
    assert.equal(missingKey.statusCode, 404);
  });

  test('refuses a wrong or missing admin token with MH_001', async () => {
    for (const headers of [
      {},
      { authorization: 'Bearer wrong-token-wrong-token-wrong' },
      { authorization: 'Basic abc' },
    ]) {
      const response = await t.app.inject({ method: 'GET', url: '/admin/v1/integrations', headers });
      assert.equal(response.statusCode, 401);
      assert.equal(response.json().error.code, 'MH_001');
    }
  });

  test('replays an admin POST sent again with the same Idempotency-Key', async () => {
    const headers = { ...ADMIN_HEADERS, 'idempotency-key': 'admin-create-0001' };
    const first = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/integrations',
      headers,
      payload: { name: 'Once' },
    });
    const second = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/integrations',
      headers,
      payload: { name: 'Once' },
    });
    assert.equal(second.statusCode, 200);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(second.body, first.body);
    const { rows } = await t.database.db.query(
      `SELECT count(*)::int AS n FROM integrations WHERE name = 'Once'`,
    );
    assert.deepEqual(rows, [{ n: 1 }]);
  });
});

describe('admin API without ADMIN_TOKEN', () => {
  test('is disabled: every admin route is 404, and so is the operator’s console', async () => {
    const t = await createTestApp({ config: { adminToken: undefined } });
    try {
      const response = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/integrations',
        headers: ADMIN_HEADERS,
        payload: { name: 'x' },
      });
      assert.equal(response.statusCode, 404);
      assert.equal(response.json().error.code, 'MH_016');
      // Nor is the operator's console, which the admin token opens.
      const console = await t.app.inject({ method: 'GET', url: '/dashboard/operator/sign-in' });
      assert.equal(console.statusCode, 404);
      assert.match(console.body, /There is no such page in the console/);
    } finally {
      await t.close();
    }
  });
});
