import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Caller, createTestApp, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

describe('idempotent POSTs', () => {
  let t: TestApp;
  let receiver: Receiver;
  before(async () => {
    t = await createTestApp({ config: { webhookPingTimeoutMs: 300 } });
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  const endpointCount = async (caller: Caller) =>
    (
      await t.database.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM webhook_endpoints WHERE integration_id = $1',
        [caller.integrationId],
      )
    ).rows[0]!.n;

  test('the same key and body replays the first response byte for byte', async () => {
    const caller = await t.newCaller();
    const headers = { 'idempotency-key': 'create-hook-0001' };
    const pings = receiver.received.length;
    const first = await caller.post(
      '/api/v1/webhooks',
      { url: receiver.url, events: ['transfer.completed'] },
      headers,
    );
    assert.equal(first.statusCode, 200);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    // Same JSON object with its keys in another order: the same request.
    const second = await caller.post(
      '/api/v1/webhooks',
      { events: ['transfer.completed'], url: receiver.url },
      headers,
    );
    assert.equal(second.statusCode, 200);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(second.body, first.body);
    assert.notEqual(second.headers['x-request-id'], first.headers['x-request-id']);
    assert.equal(await endpointCount(caller), 1);
    assert.equal(receiver.received.length, pings + 1, 'executed once: one ping');
  });

  test('the same key with a different body or path is MH_071', async () => {
    const caller = await t.newCaller();
    const headers = { 'idempotency-key': 'create-hook-0002' };
    await caller.post('/api/v1/webhooks', { url: receiver.url }, headers);
    const changed = await caller.post('/api/v1/webhooks', { url: `${receiver.url}?other` }, headers);
    assert.equal(changed.statusCode, 409);
    assert.equal(changed.json().error.code, 'MH_071');
    assert.equal(changed.json().error.param, 'Idempotency-Key');
    const otherPath = await caller.post(
      '/api/v1/transfers/estimate',
      { tokenMint: 'x', amountRaw: '1' },
      headers,
    );
    assert.equal(otherPath.json().error.code, 'MH_071');
    assert.equal(await endpointCount(caller), 1);
  });

  test('errors are stored and replayed too, without running again', async () => {
    const caller = await t.newCaller();
    const headers = { 'idempotency-key': 'create-hook-0003' };
    const first = await caller.post('/api/v1/webhooks', { url: 'http://127.0.0.1:9/down' }, headers);
    assert.equal(first.json().error.code, 'MH_050');
    const again = await caller.post('/api/v1/webhooks', { url: 'http://127.0.0.1:9/down' }, headers);
    assert.equal(again.statusCode, 400);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body, first.body);
    const invalid = await caller.post(
      '/api/v1/webhooks',
      { url: 42 },
      { 'idempotency-key': 'create-hook-0004' },
    );
    const invalidAgain = await caller.post(
      '/api/v1/webhooks',
      { url: 42 },
      { 'idempotency-key': 'create-hook-0004' },
    );
    assert.equal(invalidAgain.headers['idempotent-replayed'], 'true');
    assert.equal(invalidAgain.body, invalid.body);
  });

  test('keys are scoped per API key', async () => {
    const first = await t.newCaller();
    const second = await t.createKey(first.integrationId, 'test');
    const headers = { 'idempotency-key': 'shared-key-0001' };
    await first.post('/api/v1/webhooks', { url: receiver.url }, headers);
    const other = await t.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: { 'x-api-key': second.key, ...headers },
      payload: { url: receiver.url },
    });
    assert.equal(other.statusCode, 200);
    assert.equal(other.headers['idempotent-replayed'], undefined);
    assert.equal(await endpointCount(first), 2);
  });

  test('20 concurrent requests with one key execute exactly once', async () => {
    const caller = await t.newCaller();
    receiver.respondWith({ status: 200, delayMs: 150 });
    const pings = receiver.received.length;
    try {
      const headers = { 'idempotency-key': 'concurrent-0001' };
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => caller.post('/api/v1/webhooks', { url: receiver.url }, headers)),
      );
      const executed = responses.filter(
        (r) => r.statusCode === 200 && r.headers['idempotent-replayed'] === undefined,
      );
      const inProgress = responses.filter((r) => r.statusCode === 409);
      assert.equal(executed.length, 1);
      for (const response of inProgress) assert.equal(response.json().error.code, 'MH_072');
      assert.equal(
        executed.length +
          inProgress.length +
          responses.filter((r) => r.headers['idempotent-replayed']).length,
        20,
      );
      assert.ok(inProgress.length > 0, 'the duplicates overlapped the first request');
      assert.equal(await endpointCount(caller), 1);
      assert.equal(receiver.received.length, pings + 1);
    } finally {
      receiver.respondWith({ status: 200 });
    }
  });

  test('a key is remembered for 24 hours, then forgotten', async () => {
    const caller = await t.newCaller();
    const headers = { 'idempotency-key': 'expiring-key-0001' };
    await caller.post('/api/v1/webhooks', { url: receiver.url }, headers);
    t.clock.advance(23 * 3600 * 1000);
    assert.equal(
      (await caller.post('/api/v1/webhooks', { url: receiver.url }, headers)).headers['idempotent-replayed'],
      'true',
    );
    t.clock.advance(3600 * 1000 + 1);
    const fresh = await caller.post('/api/v1/webhooks', { url: receiver.url }, headers);
    assert.equal(fresh.headers['idempotent-replayed'], undefined);
    assert.equal(await endpointCount(caller), 2);
  });

  test('a claim abandoned by a crashed process is taken over by the retry', async () => {
    const caller = await t.newCaller();
    const headers = { 'idempotency-key': 'abandoned-0001' };
    // The first attempt claims the key; pretend its process died before answering.
    await caller.post('/api/v1/webhooks', { url: receiver.url }, headers);
    await t.database.db.query(
      `UPDATE idempotency_keys SET state = 'in_progress', response_status = NULL, response_body = NULL WHERE key = $1`,
      [headers['idempotency-key']],
    );
    const stillRunning = await caller.post('/api/v1/webhooks', { url: receiver.url }, headers);
    assert.equal(stillRunning.json().error.code, 'MH_072');
    t.clock.advance(121_000);
    const retried = await caller.post('/api/v1/webhooks', { url: receiver.url }, headers);
    assert.equal(retried.statusCode, 200);
    assert.equal(retried.headers['idempotent-replayed'], undefined);
  });

  test('the estimate honours a key when sent but does not require one', async () => {
    const caller = await t.newCaller();
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v1/transfers/estimate',
      headers: caller.headers,
      payload: { tokenMint: 'not-a-mint', amountRaw: '1' },
    });
    assert.equal(response.json().error.code, 'MH_010', 'validated, not refused for the missing key');
    const badKey = await caller.post(
      '/api/v1/transfers/estimate',
      { tokenMint: 'x', amountRaw: '1' },
      { 'idempotency-key': 'bad' },
    );
    assert.equal(badKey.json().error.code, 'MH_070');
  });
});

describe('idempotency and failures of the service', () => {
  test('a 5xx is not stored: the retry with the same key runs again and its answer is kept', async () => {
    let failures = 1;
    const t = await createTestApp({
      mints: { lookupMint: async () => ({ kind: 'mint', decimals: 9 }) },
      solCosts: {
        estimate: async () => {
          if (failures-- > 0) throw new TypeError('the estimator broke');
          return {
            breakdown: {
              routeInitRentLamports: 1_000n,
              orchestratorRentLamports: 1_000n,
              ataRentLamports: 1_000n,
              transactionFeesLamports: 5_000n,
              priorityFeesLamports: 0n,
              protocolFlatFeeLamports: 30_000n,
            },
            refundableLamports: 3_000n,
          };
        },
      },
    });
    try {
      const caller = await t.newCaller();
      const headers = { 'idempotency-key': 'estimate-after-failure' };
      const body = { tokenMint: SOL_MINT, amountRaw: '1000000000' };
      const failed = await caller.post('/api/v1/transfers/estimate', body, headers);
      assert.equal(failed.statusCode, 500);
      assert.equal(failed.json().error.code, 'MH_090');
      const stored = await t.database.db.query('SELECT 1 FROM idempotency_keys WHERE key = $1', [
        headers['idempotency-key'],
      ]);
      assert.equal(stored.rows.length, 0, 'the claim was released, nothing stored');
      const retried = await caller.post('/api/v1/transfers/estimate', body, headers);
      assert.equal(retried.statusCode, 200, retried.body);
      assert.equal(retried.headers['idempotent-replayed'], undefined);
      const replayed = await caller.post('/api/v1/transfers/estimate', body, headers);
      assert.equal(replayed.headers['idempotent-replayed'], 'true');
      assert.equal(replayed.body, retried.body);
    } finally {
      await t.close();
    }
  });
});
