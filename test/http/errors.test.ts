import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { createPostgresDb, type Db } from '../../src/store/db.ts';
import { type Caller, createTestApp, idempotencyKey, type TestApp } from '../helpers/app.ts';

/** Asserts a response is the error envelope with this status, code and (optionally) param. */
function assertEnvelope(
  response: { statusCode: number; headers: Record<string, unknown>; json(): unknown },
  status: number,
  code: string,
  param?: string,
) {
  assert.equal(response.statusCode, status);
  const body = response.json() as { error: Record<string, unknown> };
  assert.deepEqual(Object.keys(body), ['error']);
  assert.equal(body.error.code, code);
  assert.equal(body.error.requestId, response.headers['x-request-id']);
  assert.equal(typeof body.error.message, 'string');
  assert.equal(body.error.param, param);
}

describe('malformed requests get the envelope, never a 500', () => {
  let t: TestApp;
  let caller: Caller;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller();
  });
  after(() => t.close());

  const post = (url: string, payload: string | undefined, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: {
        ...caller.headers,
        'idempotency-key': idempotencyKey(),
        'content-type': 'application/json',
        ...headers,
      },
      ...(payload === undefined ? {} : { payload }),
    });

  test('invalid JSON', async () => {
    assertEnvelope(await post('/api/v1/webhooks', '{"url": '), 400, 'MH_016', 'body');
  });

  test('prototype poisoning in JSON', async () => {
    assertEnvelope(await post('/api/v1/webhooks', '{"__proto__": {"admin": true}}'), 400, 'MH_016', 'body');
  });

  test('a body that is not an object', async () => {
    assertEnvelope(await post('/api/v1/webhooks', '[1, 2]'), 400, 'MH_016', 'body');
    assertEnvelope(await post('/api/v1/webhooks', '"text"'), 400, 'MH_016', 'body');
  });

  test('an empty JSON body where one is required', async () => {
    assertEnvelope(await post('/api/v1/webhooks', ''), 400, 'MH_016', 'body');
  });

  test('wrong content type', async () => {
    const response = await post('/api/v1/webhooks', 'url=http://x', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    assertEnvelope(response, 415, 'MH_016');
  });

  test('payload too large', async () => {
    const response = await post(
      '/api/v1/webhooks',
      JSON.stringify({ url: `http://example.com/${'a'.repeat(70_000)}` }),
    );
    assertEnvelope(response, 413, 'MH_016');
  });

  test('unknown route and unknown method', async () => {
    assertEnvelope(await caller.get('/api/v1/nothing-here'), 404, 'MH_016');
    assertEnvelope(
      await t.app.inject({ method: 'PUT', url: '/api/v1/webhooks', headers: caller.headers }),
      404,
      'MH_016',
    );
  });

  test('missing, unknown and mistyped fields name the parameter', async () => {
    assertEnvelope(await post('/api/v1/webhooks', '{}'), 400, 'MH_016', 'url');
    assertEnvelope(
      await post('/api/v1/webhooks', '{"url": "http://127.0.0.1:9/x", "colour": 1}'),
      400,
      'MH_016',
      'colour',
    );
    assertEnvelope(await post('/api/v1/webhooks', '{"url": 42}'), 400, 'MH_016', 'url');
    assertEnvelope(await post('/api/v1/webhooks', '{"url": "not a url"}'), 400, 'MH_016', 'url');
    assertEnvelope(
      await post('/api/v1/webhooks', '{"url": "http://127.0.0.1:9/x", "events": ["transfer.unknown"]}'),
      400,
      'MH_016',
      'events',
    );
  });

  test('bad query and path parameters', async () => {
    assertEnvelope(await caller.get('/api/v1/transfers?limit=0'), 400, 'MH_016', 'limit');
    assertEnvelope(await caller.get('/api/v1/transfers?limit=101'), 400, 'MH_016', 'limit');
    assertEnvelope(await caller.get('/api/v1/transfers?limit=abc'), 400, 'MH_016', 'limit');
    assertEnvelope(await caller.get('/api/v1/transfers?status=lost'), 400, 'MH_016', 'status');
    assertEnvelope(await caller.get('/api/v1/transfers?fromDate=yesterday'), 400, 'MH_016', 'fromDate');
    assertEnvelope(await caller.get('/api/v1/transfers?sort=asc'), 400, 'MH_016', 'sort');
    assertEnvelope(await caller.get('/api/v1/transfers/abc'), 400, 'MH_016', 'transferId');
    assertEnvelope(await caller.get('/api/v1/transfers/0'), 400, 'MH_016', 'transferId');
    assertEnvelope(await caller.get('/api/v1/transfers/99999999999999999999'), 400, 'MH_016', 'transferId');
    assertEnvelope(
      await caller.get('/api/v1/usage?fromDate=2026-02-01T00:00:00Z&toDate=2026-01-01T00:00:00Z'),
      400,
      'MH_016',
      'fromDate',
    );
  });

  test('MH_030 for an unknown transfer id', async () => {
    assertEnvelope(await caller.get('/api/v1/transfers/424242'), 404, 'MH_030', 'transferId');
  });

  test('Idempotency-Key missing or invalid on a mutation: MH_070', async () => {
    const missing = await t.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: caller.headers,
      payload: { url: 'http://127.0.0.1:9/x' },
    });
    assertEnvelope(missing, 400, 'MH_070', 'Idempotency-Key');
    for (const key of ['short', 'has spaces in it', 'x'.repeat(65), 'bad/char/acter']) {
      assertEnvelope(
        await post('/api/v1/webhooks', '{"url":"http://127.0.0.1:9/x"}', { 'idempotency-key': key }),
        400,
        'MH_070',
        'Idempotency-Key',
      );
    }
  });

  test('a client X-Request-Id is echoed only when well-formed', async () => {
    const echoed = await t.app.inject({
      method: 'GET',
      url: '/api/v1/nothing',
      headers: { 'x-request-id': 'trace.abc-123_XYZ' },
    });
    assert.equal(echoed.headers['x-request-id'], 'trace.abc-123_XYZ');
    const replaced = await t.app.inject({
      method: 'GET',
      url: '/api/v1/nothing',
      headers: { 'x-request-id': 'bad id!' },
    });
    assert.match(String(replaced.headers['x-request-id']), /^req_/);
  });
});

describe('failures of the service itself', () => {
  test('an unexpected error is MH_090, leaks nothing and is logged under the request id', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const t = await createTestApp({
      logger,
      mints: { lookupMint: async () => ({ kind: 'mint', decimals: 9 }) },
      solCosts: {
        estimate: async () => {
          throw new TypeError('secret internal detail: connection string postgres://user:pw@db');
        },
      },
    });
    try {
      const caller = await t.newCaller();
      const response = await caller.post('/api/v1/transfers/estimate', {
        tokenMint: 'So11111111111111111111111111111111111111112',
        amountRaw: '1000000000',
      });
      assertEnvelope(response, 500, 'MH_090');
      assert.ok(!response.body.includes('secret'));
      assert.ok(!response.body.includes('postgres://'));
      const requestId = response.headers['x-request-id'];
      const failure = lines.find((line) => line.msg === 'request failed');
      assert.ok(failure, 'the failure is logged');
      assert.equal(failure.reqId, requestId);
      assert.match(String((failure.err as { message: string }).message), /secret internal detail/);
      const summary = lines.find((line) => line.msg === 'request' && line.reqId === requestId);
      assert.equal(summary?.status, 500);
      assert.equal(summary?.route, '/api/v1/transfers/estimate');
    } finally {
      await t.close();
    }
  });

  test('MH_091 with Retry-After when the database is unreachable, and /readyz reports it', async () => {
    const unreachable = createPostgresDb({ url: 'postgres://postgres@127.0.0.1:1/none', poolSize: 1 });
    let outage = false;
    // During an outage every query goes to a server that is not there.
    const t = await createTestApp({
      authCacheMs: 0,
      wrapDb: (db: Db): Db => ({
        ...db,
        query: (text, params) => (outage ? unreachable : db).query(text, params),
        transaction: (fn) => (outage ? unreachable : db).transaction(fn),
      }),
    });
    try {
      const caller = await t.newCaller();
      assert.equal((await caller.get('/api/v1/usage')).statusCode, 200);
      outage = true;
      const response = await caller.get('/api/v1/usage');
      assertEnvelope(response, 503, 'MH_091');
      assert.equal(response.headers['retry-after'], '5');
      const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
      assertEnvelope(ready, 503, 'MH_091');
      outage = false;
      assert.equal((await caller.get('/api/v1/usage')).statusCode, 200);
      assert.deepEqual((await t.app.inject({ method: 'GET', url: '/readyz' })).json(), {
        status: 'ready',
        checks: { database: 'ok' },
      });
    } finally {
      await unreachable.close();
      await t.close();
    }
  });
});
