import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { verifyWebhook } from '../../clients/typescript/src/webhooks.ts';
import { createExpiryWorker } from '../../src/workers/expiry.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import {
  createTransfer,
  type Delivery,
  emit,
  registerEndpoint,
  silentLog,
  startTestReceiver,
  type TestReceiver,
  waitFor,
  workerFor,
} from './helpers.ts';

const events = (receiver: TestReceiver) =>
  receiver.received.filter((delivery) => delivery.event.type !== 'ping');

describe('webhook delivery', () => {
  let t: TestApp;
  let receiver: TestReceiver;
  before(async () => {
    t = await createTestApp({
      config: { webhookPingTimeoutMs: 500 },
    });
    receiver = await startTestReceiver();
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  test('every event type of transfers arrives once, signed, in order, with the stored payload', async () => {
    const caller = await t.newCaller();
    const endpoint = await registerEndpoint(caller, receiver.url);
    const worker = workerFor(t);
    try {
      // Created through the API (quote_created); then the lifecycle as the keeper would record it.
      const completed = await createTransfer(caller);
      await emit(
        t,
        caller,
        completed.id,
        [
          'transfer.phase_changed',
          'transfer.deposit_confirmed',
          'transfer.phase_changed',
          'transfer.processing',
          'transfer.hop_complete',
          'transfer.hop_complete',
          'transfer.hop_complete',
          'transfer.phase_changed',
          'transfer.completed',
          'transfer.rent_reclaimed',
        ],
        { status: 'completed', phase: 'reclaimed' },
      );
      const rescued = await createTransfer(caller);
      await emit(
        t,
        caller,
        rescued.id,
        [
          'transfer.phase_changed',
          'transfer.failed',
          'transfer.recoverable',
          'transfer.rescued',
          'transfer.refunded',
        ],
        { status: 'refunded', phase: 'rescued' },
      );
      // Expiry through the real expiry worker.
      const expiring = await createTransfer(caller);
      t.clock.advance(15 * 60 * 1000);
      const expiry = createExpiryWorker({ transfers: t.store.transfers, clock: t.clock, log: silentLog });
      assert.equal(await expiry.runOnce(), 1);

      assert.equal(await worker.runOnce(), 20);
      assert.equal(await worker.runOnce(), 0);

      const { rows: stored } = await t.database.db.query<{
        id: string;
        type: string;
        transfer_id: string;
        sequence: number;
        payload: unknown;
      }>(
        'SELECT id, type, transfer_id, sequence, payload FROM events WHERE integration_id = $1 ORDER BY transfer_id, sequence',
        [caller.integrationId],
      );
      assert.equal(stored.length, 20);
      const got = events(receiver).filter((delivery) => stored.some((row) => row.id === delivery.event.id));
      assert.equal(got.length, 20, 'each event once');
      const byId = new Map(got.map((delivery) => [delivery.event.id, delivery]));
      assert.equal(byId.size, 20);
      for (const row of stored) {
        const delivery = byId.get(row.id)!;
        assert.deepEqual(JSON.parse(delivery.body), row.payload);
        assert.equal(delivery.headers['mh-event-id'], row.id);
        assert.equal(delivery.headers['mh-event-type'], row.type);
        assert.equal(delivery.headers['content-type'], 'application/json');
        const verified = verifyWebhook(delivery.body, delivery.headers['mh-signature'], endpoint.secret, {
          now: t.clock.now(),
        });
        assert.equal(verified.id, row.id);
      }
      const allTypes = new Set(stored.map((row) => row.type));
      assert.equal(allTypes.size, 12, 'all twelve event types were produced and delivered');

      // Per transfer: sequence 1, 2, 3, ... in arrival order.
      for (const transfer of [completed, rescued, expiring]) {
        const sequences = got
          .filter((delivery) => delivery.event.data.transfer?.id === transfer.id)
          .map((delivery) => delivery.event.sequence);
        assert.deepEqual(
          sequences,
          sequences.map((_, index) => index + 1),
        );
      }
      const last = JSON.parse(byId.get(stored.find((row) => row.type === 'transfer.expired')!.id)!.body);
      assert.deepEqual(
        {
          type: last.type,
          isTest: last.isTest,
          apiVersion: last.apiVersion,
          status: last.data.transfer.status,
          phase: last.data.transfer.phase,
        },
        {
          type: 'transfer.expired',
          isTest: true,
          apiVersion: 'v1',
          status: 'expired',
          phase: 'expired',
        },
      );

      const { rows: deliveries } = await t.database.db.query<{ status: string; attempts: number; n: number }>(
        `SELECT status, attempts, count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1
          GROUP BY status, attempts`,
        [endpoint.id],
      );
      assert.deepEqual(deliveries, [{ status: 'succeeded', attempts: 1, n: 20 }]);
    } finally {
      await worker.close();
    }
  });

  test('only subscribed types of the owner and mode are delivered; other endpoints see nothing', async () => {
    const caller = await t.newCaller();
    const other = await t.newCaller();
    const live = await t.createKey(caller.integrationId, 'live');
    const onlyCompleted = await startTestReceiver();
    const otherReceiver = await startTestReceiver();
    const liveReceiver = await startTestReceiver();
    const worker = workerFor(t);
    try {
      const endpoint = await registerEndpoint(caller, onlyCompleted.url, ['transfer.completed']);
      await registerEndpoint(other, otherReceiver.url);
      const liveResponse = await t.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks',
        headers: { 'x-api-key': live.key, 'idempotency-key': 'live-endpoint-01' },
        payload: { url: liveReceiver.url },
      });
      assert.equal(liveResponse.statusCode, 200);
      const transfer = await createTransfer(caller);
      await emit(t, caller, transfer.id, ['transfer.phase_changed', 'transfer.completed']);
      assert.equal(await worker.runOnce(), 1);
      assert.deepEqual(
        events(onlyCompleted).map((delivery) => [delivery.event.type, delivery.event.sequence]),
        [['transfer.completed', 3]],
      );
      assert.deepEqual(events(otherReceiver), []);
      assert.deepEqual(events(liveReceiver), []);
      assert.deepEqual(
        (
          await t.database.db.query(
            'SELECT endpoint_id FROM webhook_deliveries WHERE endpoint_id <> $1 AND event_id IN (SELECT id FROM events WHERE transfer_id = $2)',
            [endpoint.id, transfer.id],
          )
        ).rows,
        [],
      );
    } finally {
      await worker.close();
      await Promise.all([onlyCompleted.close(), otherReceiver.close(), liveReceiver.close()]);
    }
  });

  test('a running worker wakes on NOTIFY, without waiting for its poll', async () => {
    const caller = await t.newCaller();
    const own = await startTestReceiver();
    await registerEndpoint(caller, own.url);
    const worker = workerFor(t, { pollIntervalMs: 60_000 });
    try {
      worker.start();
      await waitFor(
        async () => {
          // Let the worker go idle first: its first claim finds nothing.
          const { rows } = await t.database.db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND datname = current_database()`,
          );
          return rows[0]!.n > 0;
        },
        5_000,
        'LISTEN',
      );
      const transfer = await createTransfer(caller);
      await emit(t, caller, transfer.id, ['transfer.phase_changed']);
      await waitFor(() => events(own).length === 2, 5_000, 'both events within 5 s (the poll is 60 s)');
    } finally {
      await worker.close();
      await own.close();
    }
  });

  test('a later event of a transfer waits while an earlier one is being retried', async () => {
    const caller = await t.newCaller();
    const flaky = await startTestReceiver();
    const worker = workerFor(t);
    try {
      const endpoint = await registerEndpoint(caller, flaky.url);
      flaky.answerWith(() => ({ status: 503 }));
      const first = await createTransfer(caller);
      await emit(t, caller, first.id, ['transfer.phase_changed', 'transfer.processing']);
      const second = await createTransfer(caller);
      // One attempt per transfer: their first events; the rest wait behind them.
      assert.equal(await worker.runOnce(), 2);
      assert.deepEqual(
        events(flaky).map((delivery: Delivery) => [
          delivery.event.data.transfer?.id,
          delivery.event.sequence,
        ]),
        [
          [first.id, 1],
          [second.id, 1],
        ],
      );
      flaky.answerWith(() => ({ status: 200 }));
      // Nothing is due before the first retry (10 s with the middle of the jitter).
      t.clock.advance(9_999);
      assert.equal(await worker.runOnce(), 0);
      t.clock.advance(1);
      assert.equal(await worker.runOnce(), 4);
      const retried = events(flaky)
        .slice(2)
        .map((delivery) => [delivery.event.data.transfer?.id, delivery.event.sequence]);
      // A failing endpoint gets one request at a time: the oldest due delivery goes first alone.
      assert.deepEqual(retried[0], [first.id, 1]);
      assert.deepEqual(
        retried.filter(([id]) => id === first.id),
        [
          [first.id, 1],
          [first.id, 2],
          [first.id, 3],
        ],
      );
      assert.deepEqual(
        retried.filter(([id]) => id === second.id),
        [[second.id, 1]],
      );
      const rows = await t.database.db.query<{ status: string; n: number }>(
        'SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 GROUP BY status',
        [endpoint.id],
      );
      assert.deepEqual(rows.rows, [{ status: 'succeeded', n: 4 }]);
    } finally {
      await worker.close();
      await flaky.close();
    }
  });
});
