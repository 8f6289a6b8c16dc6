import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { verifyWebhook } from '../../clients/typescript/src/webhooks.ts';
import { type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import {
  createTransfer,
  emit,
  registerEndpoint,
  startTestReceiver,
  type TestReceiver,
  workerFor,
} from './helpers.ts';

const NOW = '2026-06-01T12:00:00.000Z';

describe('webhook and event tools', () => {
  // A database per test: workers deliver whatever is due in theirs, and some tests move the clock.
  let t: TestApp;
  let receiver: TestReceiver;
  before(async () => {
    receiver = await startTestReceiver();
  });
  after(() => receiver.close());
  beforeEach(async () => {
    t = await createTestApp({
      config: { webhookPingTimeoutMs: 500 },
    });
    receiver.answerWith(() => ({ status: 200 }));
  });
  afterEach(() => t.close());

  const notFound = (
    response: { statusCode: number; json(): { error: { code: string; param?: string } } },
    param: string,
  ) => {
    assert.equal(response.statusCode, 404);
    assert.equal(response.json().error.code, 'MH_016');
    assert.equal(response.json().error.param, param);
  };

  test('POST /webhooks/{id}/test sends a signed ping now, reports the answer and logs it', async () => {
    const caller = await t.newCaller();
    const endpoint = await registerEndpoint(caller, receiver.url);
    receiver.answerWith(() => ({ status: 202 }));
    const sent = await caller.post(`/api/v1/webhooks/${endpoint.id}/test`);
    assert.equal(sent.statusCode, 200);
    const ping = receiver.received.at(-1)!;
    assert.deepEqual(sent.json(), {
      id: sent.json().id,
      eventId: ping.event.id,
      eventType: 'ping',
      trigger: 'test',
      attempt: 1,
      attemptedAt: NOW,
      success: true,
      responseStatus: 202,
      responseBody: 'ok',
      durationMs: sent.json().durationMs,
      error: null,
    });
    assert.deepEqual(
      verifyWebhook(ping.body, ping.headers['mh-signature'], endpoint.secret, { now: t.clock.now() }),
      {
        id: ping.event.id,
        type: 'ping',
        createdAt: NOW,
        isTest: true,
        apiVersion: 'v1',
        data: { url: receiver.url },
      },
    );

    receiver.answerWith(() => ({ status: 500 }));
    const failed = (await caller.post(`/api/v1/webhooks/${endpoint.id}/test`)).json();
    assert.deepEqual([failed.success, failed.responseStatus, failed.error], [false, 500, null]);
    receiver.answerWith(() => ({ status: 200 }));

    const log = (await caller.get(`/api/v1/webhooks/${endpoint.id}/deliveries`)).json();
    assert.deepEqual(log.items, [failed, sent.json()]);
    // A test send retries nothing and queues nothing.
    const { rows } = await t.database.db.query('SELECT 1 FROM webhook_deliveries WHERE endpoint_id = $1', [
      endpoint.id,
    ]);
    assert.deepEqual(rows, []);

    const unreachable = await t.newCaller();
    const down = await startTestReceiver();
    const downEndpoint = await registerEndpoint(unreachable, down.url);
    await down.stop();
    const refused = (await unreachable.post(`/api/v1/webhooks/${downEndpoint.id}/test`)).json();
    assert.equal(refused.success, false);
    assert.equal(refused.responseStatus, null);
    assert.match(refused.error, /ECONNREFUSED/);
  });

  test('unknown, foreign and deleted endpoints are 404 (MH_016, param endpointId)', async () => {
    const owner = await t.newCaller();
    const other = await t.newCaller();
    const endpoint = await registerEndpoint(owner, receiver.url);
    for (const path of ['deliveries']) {
      notFound(await other.get(`/api/v1/webhooks/${endpoint.id}/${path}`), 'endpointId');
      notFound(await owner.get(`/api/v1/webhooks/999999/${path}`), 'endpointId');
    }
    for (const action of ['test', 'rotate-secret', 'enable']) {
      notFound(await other.post(`/api/v1/webhooks/${endpoint.id}/${action}`), 'endpointId');
    }
    await owner.delete(`/api/v1/webhooks/${endpoint.id}`);
    notFound(await owner.get(`/api/v1/webhooks/${endpoint.id}/deliveries`), 'endpointId');
    notFound(await owner.post(`/api/v1/webhooks/${endpoint.id}/test`), 'endpointId');
    const error = (await owner.post(`/api/v1/webhooks/${endpoint.id}/enable`)).json().error;
    assert.deepEqual(error, {
      code: 'MH_016',
      message: `No webhook endpoint with id ${endpoint.id}.`,
      requestId: error.requestId,
      param: 'endpointId',
    });
  });

  test('validation: query and body values are checked (MH_016 with the parameter)', async () => {
    const caller = await t.newCaller();
    const endpoint = await registerEndpoint(caller, receiver.url);
    const cases: [
      Promise<{ json(): { error: { code: string; param?: string } }; statusCode: number }>,
      string,
    ][] = [
      [caller.get(`/api/v1/webhooks/${endpoint.id}/deliveries?success=yes`), 'success'],
      [caller.get(`/api/v1/webhooks/${endpoint.id}/deliveries?limit=101`), 'limit'],
      [caller.get('/api/v1/events?deliverySuccess=1'), 'deliverySuccess'],
      [caller.get('/api/v1/events?type=transfer.unknown'), 'type'],
      [caller.get('/api/v1/events?limit=0'), 'limit'],
      [caller.get('/api/v1/events?transferId=abc'), 'transferId'],
      [caller.get('/api/v1/events?colour=red'), 'colour'],
      [
        caller.post(`/api/v1/webhooks/${endpoint.id}/rotate-secret`, { overlapSeconds: 604801 }),
        'overlapSeconds',
      ],
      [caller.post(`/api/v1/webhooks/${endpoint.id}/rotate-secret`, { overlap: 10 }), 'overlap'],
      [caller.post('/api/v1/events/not-an-event/resend'), 'eventId'],
    ];
    for (const [pending, param] of cases) {
      const response = await pending;
      assert.equal(response.statusCode, 400, param);
      assert.equal(response.json().error.code, 'MH_016', param);
      assert.equal(response.json().error.param, param);
    }
  });

  test('GET /events: newest first, exact payloads with delivery state, filters, pages, 30 days, scoped', async () => {
    const caller = await t.newCaller();
    const endpoint = await registerEndpoint(caller, receiver.url);
    const worker = workerFor(t);
    try {
      const first = await createTransfer(caller);
      await worker.runOnce();
      t.clock.advance(1_000);
      const second = await createTransfer(caller);
      receiver.answerWith(() => ({ status: 500 }));
      await emit(t, caller, second.id, ['transfer.phase_changed', 'transfer.expired'], {
        status: 'expired',
        phase: 'expired',
      });
      await worker.runOnce();
      receiver.answerWith(() => ({ status: 200 }));

      const listed = await caller.get('/api/v1/events');
      assert.equal(listed.statusCode, 200);
      const body = listed.json();
      const { rows } = await t.database.db.query<{ id: string; payload: Record<string, unknown> }>(
        `SELECT id, payload FROM events WHERE integration_id = $1
          ORDER BY created_at DESC, sequence DESC`,
        [caller.integrationId],
      );
      assert.equal(rows.length, 4);
      const retryAt = new Date(Date.parse(NOW) + 1_000 + 10_000).toISOString();
      const pending = (
        attempts: number,
        lastAttemptAt: string | null,
        lastResponseStatus: number | null,
      ) => ({
        endpointId: endpoint.id,
        status: 'pending',
        trigger: 'event',
        attempts,
        nextAttemptAt:
          attempts === 0 ? (lastAttemptAt ?? new Date(Date.parse(NOW) + 1_000).toISOString()) : retryAt,
        lastAttemptAt,
        lastResponseStatus,
        lastError: null,
        completedAt: null,
      });
      const secondAt = new Date(Date.parse(NOW) + 1_000).toISOString();
      assert.deepEqual(body, {
        items: [
          { ...rows[0]!.payload, deliverySuccess: false, deliveries: [pending(0, null, null)] },
          { ...rows[1]!.payload, deliverySuccess: false, deliveries: [pending(0, null, null)] },
          { ...rows[2]!.payload, deliverySuccess: false, deliveries: [pending(1, secondAt, 500)] },
          {
            ...rows[3]!.payload,
            deliverySuccess: true,
            deliveries: [
              {
                endpointId: endpoint.id,
                status: 'succeeded',
                trigger: 'event',
                attempts: 1,
                nextAttemptAt: null,
                lastAttemptAt: NOW,
                lastResponseStatus: 200,
                lastError: null,
                completedAt: NOW,
              },
            ],
          },
        ],
        pagination: { total: 4, limit: 50, offset: 0 },
      });
      assert.deepEqual(
        listed.json().items.map((item: { type: string; sequence: number }) => [item.type, item.sequence]),
        [
          ['transfer.expired', 3],
          ['transfer.phase_changed', 2],
          ['transfer.quote_created', 1],
          ['transfer.quote_created', 1],
        ],
      );

      const ids = (query: string) =>
        caller.get(`/api/v1/events?${query}`).then((response) => {
          assert.equal(response.statusCode, 200, response.body);
          return response.json().items.map((item: { id: string }) => item.id);
        });
      assert.deepEqual(await ids('type=transfer.quote_created'), [rows[2]!.id, rows[3]!.id]);
      assert.deepEqual(await ids(`transferId=${first.id}`), [rows[3]!.id]);
      assert.deepEqual(await ids('deliverySuccess=true'), [rows[3]!.id]);
      assert.deepEqual(await ids('deliverySuccess=false&type=transfer.quote_created'), [rows[2]!.id]);
      assert.deepEqual(await ids('limit=2&offset=1'), [rows[1]!.id, rows[2]!.id]);
      const beyond = (await caller.get('/api/v1/events?offset=10')).json();
      assert.deepEqual(beyond, { items: [], pagination: { total: 4, limit: 50, offset: 10 } });
      // Events sent to one endpoint: one subscribed to another type gets only the one resent to it.
      const expiredOnly = await registerEndpoint(caller, receiver.url, ['transfer.expired']);
      assert.deepEqual(await ids(`endpointId=${expiredOnly.id}`), []);
      const resent = await caller.post(`/api/v1/events/${rows[1]!.id}/resend`, {
        endpointId: expiredOnly.id,
      });
      assert.equal(resent.statusCode, 200, resent.body);
      assert.deepEqual(await ids(`endpointId=${expiredOnly.id}`), [rows[1]!.id]);
      assert.deepEqual(
        await ids(`endpointId=${endpoint.id}`),
        rows.map((row) => row.id),
      );

      const other = await t.newCaller();
      assert.deepEqual((await other.get('/api/v1/events')).json().items, []);
      const live = await t.createKey(caller.integrationId, 'live');
      const liveList = await t.app.inject({
        method: 'GET',
        url: '/api/v1/events',
        headers: { 'x-api-key': live.key },
      });
      assert.deepEqual(liveList.json().items, []);
      const foreignResend = await other.post(`/api/v1/events/${rows[0]!.id}/resend`);
      notFound(foreignResend, 'eventId');

      // Events are listed (and resent) for 30 days.
      t.clock.advance(30 * 24 * 3600 * 1000 - 1_000 + 1);
      assert.equal((await caller.get('/api/v1/events')).json().pagination.total, 3);
      t.clock.advance(1_000);
      assert.equal((await caller.get('/api/v1/events')).json().pagination.total, 0);
      notFound(await caller.post(`/api/v1/events/${rows[0]!.id}/resend`), 'eventId');
    } finally {
      await worker.close();
      receiver.answerWith(() => ({ status: 200 }));
    }
  });

  test('POST /events/{id}/resend: to subscribed endpoints, or one named endpoint; refusals', async () => {
    const caller = await t.newCaller();
    const all = await registerEndpoint(caller, receiver.url);
    const completedOnly = await registerEndpoint(caller, `${receiver.url}?completed`, ['transfer.completed']);
    const worker = workerFor(t);
    try {
      await createTransfer(caller);
      assert.equal(await worker.runOnce(), 1);
      const [event] = (await caller.get('/api/v1/events')).json().items;

      const resent = await caller.post(`/api/v1/events/${event.id}/resend`);
      assert.equal(resent.statusCode, 200);
      assert.deepEqual(resent.json(), {
        eventId: event.id,
        deliveries: [
          {
            endpointId: all.id,
            status: 'pending',
            trigger: 'resend',
            attempts: 0,
            nextAttemptAt: t.clock.now().toISOString(),
            lastAttemptAt: NOW,
            lastResponseStatus: 200,
            lastError: null,
            completedAt: null,
          },
        ],
      });
      assert.equal(await worker.runOnce(), 1);
      const named = await caller.post(`/api/v1/events/${event.id}/resend`, { endpointId: completedOnly.id });
      assert.deepEqual(
        named
          .json()
          .deliveries.map((delivery: { endpointId: number; trigger: string }) => [
            delivery.endpointId,
            delivery.trigger,
          ]),
        [[completedOnly.id, 'resend']],
      );
      assert.equal(await worker.runOnce(), 1);
      const copies = receiver.received.filter((delivery) => delivery.event.id === event.id);
      assert.deepEqual(
        copies.map((delivery) => delivery.headers['mh-event-id']),
        [event.id, event.id, event.id],
      );
      const log = (await caller.get(`/api/v1/webhooks/${all.id}/deliveries?eventId=${event.id}`)).json();
      assert.deepEqual(
        log.items.map((item: { trigger: string; attempt: number; success: boolean }) => [
          item.trigger,
          item.attempt,
          item.success,
        ]),
        [
          ['resend', 1, true],
          ['event', 1, true],
        ],
      );

      notFound(await caller.post('/api/v1/events/evt_doesnotexist/resend'), 'eventId');
      notFound(await caller.post(`/api/v1/events/${event.id}/resend`, { endpointId: 999999 }), 'endpointId');
      await t.database.db.query('UPDATE webhook_endpoints SET is_active = false WHERE id = $1', [
        completedOnly.id,
      ]);
      const disabled = await caller.post(`/api/v1/events/${event.id}/resend`, {
        endpointId: completedOnly.id,
      });
      assert.equal(disabled.statusCode, 400);
      assert.deepEqual([disabled.json().error.code, disabled.json().error.param], ['MH_016', 'endpointId']);
      await caller.delete(`/api/v1/webhooks/${all.id}`);
      const none = await caller.post(`/api/v1/events/${event.id}/resend`);
      assert.equal(none.statusCode, 400);
      assert.equal(none.json().error.code, 'MH_016');
      assert.match(none.json().error.message, /None of your active webhook endpoints/);
    } finally {
      await worker.close();
    }
  });

  test('enabling an active endpoint changes nothing', async () => {
    const caller: Caller = await t.newCaller();
    const endpoint = await registerEndpoint(caller, receiver.url);
    const enabled = await caller.post(`/api/v1/webhooks/${endpoint.id}/enable`);
    assert.equal(enabled.statusCode, 200);
    assert.equal(enabled.json().isActive, true);
    assert.equal(enabled.json().secret, null);
  });

  test('the OpenAPI document describes the tools', async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const operations = {
      '/api/v1/webhooks/{endpointId}/deliveries': 'get',
      '/api/v1/webhooks/{endpointId}/test': 'post',
      '/api/v1/webhooks/{endpointId}/rotate-secret': 'post',
      '/api/v1/webhooks/{endpointId}/enable': 'post',
      '/api/v1/events': 'get',
      '/api/v1/events/{eventId}/resend': 'post',
    };
    for (const [path, method] of Object.entries(operations)) {
      const operation = document.paths[path]?.[method];
      assert.ok(operation, `${method} ${path}`);
      assert.ok(operation.summary, path);
      assert.ok(operation.tags.length > 0, path);
      assert.ok(operation.responses['200'], path);
      assert.ok(operation.responses['4XX'] ?? operation.responses['4xx'], path);
    }
    const events = document.paths['/api/v1/events'].get;
    assert.deepEqual(events.parameters.map((parameter: { name: string }) => parameter.name).sort(), [
      'deliverySuccess',
      'endpointId',
      'limit',
      'offset',
      'transferId',
      'type',
    ]);
  });
});
