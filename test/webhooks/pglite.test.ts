import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { verifyWebhook } from '../../clients/typescript/src/webhooks.ts';
import { createPgliteDb } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import {
  createTransfer,
  emit,
  registerEndpoint,
  startTestReceiver,
  type TestReceiver,
  workerFor,
} from './helpers.ts';

describe('webhook delivery on embedded PGlite', () => {
  let t: TestApp;
  let receiver: TestReceiver;
  before(async () => {
    const db = await createPgliteDb();
    await migrate(db);
    t = await createTestApp({
      database: { url: 'pglite://memory', db, drop: () => db.close() },
      config: { webhookPingTimeoutMs: 500 },
    });
    receiver = await startTestReceiver();
  });
  after(async () => {
    await receiver.close();
    await t.close();
    await t.database.drop();
  });

  test('claims, delivers in order, retries and lists events as on PostgreSQL', async () => {
    const caller = await t.newCaller();
    const endpoint = await registerEndpoint(caller, receiver.url);
    const worker = workerFor(t);
    try {
      receiver.answerWith(() => ({ status: 500 }));
      const transfer = await createTransfer(caller);
      await emit(t, caller, transfer.id, ['transfer.phase_changed', 'transfer.expired'], {
        status: 'expired',
        phase: 'expired',
      });
      assert.equal(await worker.runOnce(), 1);
      receiver.answerWith(() => ({ status: 200 }));
      t.clock.advance(10_000);
      assert.equal(await worker.runOnce(), 3);
      const delivered = receiver.received.filter((delivery) => delivery.event.type !== 'ping');
      assert.deepEqual(
        delivered.map((delivery) => delivery.event.sequence),
        [1, 1, 2, 3],
      );
      for (const delivery of delivered) {
        verifyWebhook(delivery.body, delivery.headers['mh-signature'], endpoint.secret, {
          now: t.clock.now(),
        });
      }
      const events = (await caller.get('/api/v1/events?deliverySuccess=true')).json();
      assert.equal(events.pagination.total, 3);
      const log = (await caller.get(`/api/v1/webhooks/${endpoint.id}/deliveries?success=false`)).json();
      assert.deepEqual(
        log.items.map((item: { attempt: number; responseStatus: number }) => [
          item.attempt,
          item.responseStatus,
        ]),
        [[1, 500]],
      );
    } finally {
      await worker.close();
    }
  });

  test('a continuously running worker wakes on NOTIFY', async () => {
    const caller = await t.newCaller();
    const own = await startTestReceiver();
    await registerEndpoint(caller, own.url);
    const worker = workerFor(t, { pollIntervalMs: 60_000 });
    try {
      worker.start();
      await createTransfer(caller);
      const deadline = Date.now() + 5_000;
      while (own.received.filter((delivery) => delivery.event.type !== 'ping').length === 0) {
        assert.ok(Date.now() < deadline, 'delivered without waiting for a poll');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    } finally {
      await worker.close();
      await own.close();
    }
  });
});
