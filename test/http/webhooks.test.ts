import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { EVENT_TYPES } from '../../src/domain/transfer.ts';
import { type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

describe('webhook endpoints', () => {
  let t: TestApp;
  let receiver: Receiver;
  let caller: Caller;
  before(async () => {
    t = await createTestApp({ config: { webhookPingTimeoutMs: 300 } });
    receiver = await startReceiver();
    caller = await t.newCaller();
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  test('registering pings the URL with a signed event and shows the secret once', async () => {
    const before = receiver.received.length;
    const response = await caller.post('/api/v1/webhooks', { url: receiver.url });
    assert.equal(response.statusCode, 200);
    const body = response.json();
    assert.match(body.secret, /^whsec_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(body, {
      id: body.id,
      url: receiver.url,
      secret: body.secret,
      events: [...EVENT_TYPES],
      isActive: true,
      createdAt: '2026-06-01T12:00:00.000Z',
    });

    assert.equal(receiver.received.length, before + 1);
    const ping = receiver.received.at(-1)!;
    assert.equal(ping.method, 'POST');
    assert.equal(ping.headers['content-type'], 'application/json');
    assert.equal(ping.headers['mh-event-type'], 'ping');
    const event = JSON.parse(ping.body);
    assert.deepEqual(event, {
      id: ping.headers['mh-event-id'],
      type: 'ping',
      createdAt: '2026-06-01T12:00:00.000Z',
      isTest: true,
      apiVersion: 'v1',
      data: { url: receiver.url },
    });
    const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(ping.headers['mh-signature']));
    assert.ok(match, String(ping.headers['mh-signature']));
    assert.equal(match[1], String(Date.parse('2026-06-01T12:00:00.000Z') / 1000));
    const expected = createHmac('sha256', body.secret).update(`${match[1]}.${ping.body}`).digest('hex');
    assert.equal(match[2], expected);

    const stored = await t.database.db.query<{ secret_sealed: string; events: unknown }>(
      'SELECT secret_sealed, events FROM webhook_endpoints WHERE id = $1',
      [body.id],
    );
    assert.ok(!stored.rows[0]!.secret_sealed.includes(body.secret.slice(6)), 'secret sealed at rest');
    const replays = await t.database.db.query<{ response_body: string }>(
      'SELECT response_body FROM idempotency_keys',
    );
    assert.ok(replays.rows.length > 0);
    assert.ok(
      replays.rows.every((row) => !row.response_body.includes('whsec_')),
      'stored idempotent responses are sealed too',
    );
    assert.equal(stored.rows[0]!.events, null);

    const listed = await caller.get('/api/v1/webhooks');
    const item = listed.json().items.find((entry: { id: number }) => entry.id === body.id);
    assert.deepEqual(item, { ...body, secret: null });
  });

  test('events: "*" means all, an array is kept as given without duplicates', async () => {
    const all = await caller.post('/api/v1/webhooks', { url: receiver.url, events: '*' });
    assert.deepEqual(all.json().events, [...EVENT_TYPES]);
    const some = await caller.post('/api/v1/webhooks', {
      url: receiver.url,
      events: ['transfer.completed', 'transfer.failed', 'transfer.completed'],
    });
    assert.deepEqual(some.json().events, ['transfer.completed', 'transfer.failed']);
    const empty = await caller.post('/api/v1/webhooks', { url: receiver.url, events: [] });
    assert.equal(empty.json().error.code, 'MH_016');
  });

  test('any HTTP answer counts as reachable, even an error status', async () => {
    receiver.respondWith({ status: 500 });
    try {
      assert.equal((await caller.post('/api/v1/webhooks', { url: receiver.url })).statusCode, 200);
    } finally {
      receiver.respondWith({ status: 200 });
    }
  });

  test('MH_050 when nothing answers: refused connection or no response in time', async () => {
    const owner = await t.newCaller();
    const refused = await owner.post('/api/v1/webhooks', { url: 'http://127.0.0.1:9/hooks' });
    assert.equal(refused.statusCode, 400);
    assert.equal(refused.json().error.code, 'MH_050');
    assert.equal(refused.json().error.param, 'url');
    assert.match(refused.json().error.message, /ECONNREFUSED/);

    const silent = await startReceiver('hang');
    try {
      const timedOut = await owner.post('/api/v1/webhooks', { url: silent.url });
      assert.equal(timedOut.json().error.code, 'MH_050');
      assert.match(timedOut.json().error.message, /no response within 300 ms/);
    } finally {
      await silent.close();
    }
    assert.deepEqual((await owner.get('/api/v1/webhooks')).json(), { items: [] });
  });

  test('endpoints are separated by integration and mode; delete is scoped and idempotent', async () => {
    const owner = await t.newCaller('test');
    const live = await t.createKey(owner.integrationId, 'live');
    const other = await t.newCaller('test');
    const { id } = (await owner.post('/api/v1/webhooks', { url: receiver.url })).json();

    const liveList = await t.app.inject({
      method: 'GET',
      url: '/api/v1/webhooks',
      headers: { 'x-api-key': live.key },
    });
    assert.deepEqual(liveList.json(), { items: [] });
    assert.deepEqual((await other.get('/api/v1/webhooks')).json(), { items: [] });

    assert.deepEqual((await other.delete(`/api/v1/webhooks/${id}`)).json(), { deleted: false });
    assert.equal((await owner.get('/api/v1/webhooks')).json().items.length, 1);
    assert.deepEqual((await owner.delete(`/api/v1/webhooks/${id}`)).json(), { deleted: true });
    assert.deepEqual((await owner.delete(`/api/v1/webhooks/${id}`)).json(), { deleted: false });
    assert.deepEqual((await owner.get('/api/v1/webhooks')).json(), { items: [] });
  });

  test('MH_051 beyond 10 endpoints per integration and mode; deleting frees a place', async () => {
    const owner = await t.newCaller();
    const ids: number[] = [];
    for (let index = 0; index < 10; index++) {
      const response = await owner.post('/api/v1/webhooks', { url: `${receiver.url}?n=${index}` });
      assert.equal(response.statusCode, 200);
      ids.push(response.json().id);
    }
    const eleventh = await owner.post('/api/v1/webhooks', { url: receiver.url });
    assert.equal(eleventh.statusCode, 400);
    assert.equal(eleventh.json().error.code, 'MH_051');
    await owner.delete(`/api/v1/webhooks/${ids[0]}`);
    assert.equal((await owner.post('/api/v1/webhooks', { url: receiver.url })).statusCode, 200);
  });
});

describe('webhook URLs in production mode', () => {
  let t: TestApp;
  let caller: Caller;
  before(async () => {
    t = await createTestApp({
      config: {
        webhookPolicy: { requireHttps: true, allowPrivateNetworks: false },
        webhookPingTimeoutMs: 300,
      },
    });
    caller = await t.newCaller('live');
  });
  after(() => t.close());

  test('refuses plain http, loopback, private and link-local targets and local names (MH_050)', async () => {
    for (const url of [
      'http://example.com/hooks',
      'https://127.0.0.1/hooks',
      'https://10.1.2.3/hooks',
      'https://192.168.1.10/hooks',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/hooks',
      'https://[::ffff:127.0.0.1]/hooks',
      'https://localhost/hooks',
      'https://user:pass@example.com/hooks',
    ]) {
      const response = await caller.post('/api/v1/webhooks', { url });
      assert.equal(response.statusCode, 400, url);
      assert.equal(response.json().error.code, 'MH_050', url);
    }
  });

  test('refuses a host name that resolves to a private address at connection time', async () => {
    // `vm` is in this machine's hosts file as 127.0.0.1.
    const response = await caller.post('/api/v1/webhooks', { url: 'https://vm/hooks' });
    assert.equal(response.json().error.code, 'MH_050');
    assert.match(response.json().error.message, /non-public address/);
  });
});
