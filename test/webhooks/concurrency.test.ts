import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { verifyWebhook } from '../../clients/typescript/src/webhooks.ts';
import { createPostgresDb, type Db } from '../../src/store/db.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import {
  emit,
  registerEndpoint,
  startTestReceiver,
  type TestReceiver,
  transferFactory,
  waitFor,
  workerFor,
} from './helpers.ts';

const eventsOf = (receiver: TestReceiver) =>
  receiver.received.filter((delivery) => delivery.event.type !== 'ping');

describe('webhook delivery under concurrency', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({
      config: { webhookPingTimeoutMs: 500 },
    });
  });
  afterEach(() => t.close());

  test('two workers never send a delivery twice, and keep each transfer in order', async () => {
    const caller = await t.newCaller();
    const receivers = [await startTestReceiver(), await startTestReceiver(), await startTestReceiver()];
    const endpoints = [];
    for (const receiver of receivers) endpoints.push(await registerEndpoint(caller, receiver.url));
    const newTransfer = transferFactory(t, caller);
    const transfers = [];
    for (let index = 0; index < 20; index++) transfers.push(await newTransfer());
    for (const transfer of transfers) {
      await emit(t, caller, transfer.id, [
        'transfer.phase_changed',
        'transfer.processing',
        'transfer.hop_complete',
      ]);
    }
    // Each worker on its own connection pool, as two processes would be.
    const pools: Db[] = [
      createPostgresDb({ url: t.database.url }),
      createPostgresDb({ url: t.database.url }),
    ];
    const workers = pools.map((db) => workerFor(t, { db, batchSize: 7 }));
    try {
      // Both drain at the same moment, then both run continuously while more events arrive.
      const counts = await Promise.all(workers.map((worker) => worker.runOnce()));
      assert.equal(counts[0]! + counts[1]!, 20 * 4 * 3);
      for (const worker of workers) worker.start();
      for (const transfer of transfers) {
        await emit(t, caller, transfer.id, ['transfer.completed'], { status: 'completed', phase: 'settled' });
      }
      await waitFor(
        () => receivers.every((receiver) => eventsOf(receiver).length === 20 * 5),
        10_000,
        'events',
      );
      for (const worker of workers) await worker.close();

      for (const [index, receiver] of receivers.entries()) {
        const ids = eventsOf(receiver).map((delivery) => delivery.event.id);
        assert.equal(new Set(ids).size, ids.length, 'no event twice');
        for (const transfer of transfers) {
          assert.deepEqual(
            eventsOf(receiver)
              .filter((delivery) => delivery.event.data.transfer?.id === transfer.id)
              .map((delivery) => delivery.event.sequence),
            [1, 2, 3, 4, 5],
          );
        }
        for (const delivery of eventsOf(receiver)) {
          verifyWebhook(delivery.body, delivery.headers['mh-signature'], endpoints[index]!.secret, {
            now: t.clock.now(),
          });
        }
        assert.ok(receiver.maxInFlight <= 10, `per-endpoint cap across workers: ${receiver.maxInFlight}`);
      }
      const { rows } = await t.database.db.query<{ n: number; attempts: number }>(
        `SELECT count(*)::int AS n, max(attempt) AS attempts FROM webhook_delivery_attempts WHERE succeeded`,
      );
      assert.deepEqual(rows, [{ n: 20 * 5 * 3, attempts: 1 }]);
    } finally {
      for (const worker of workers) await worker.close();
      for (const pool of pools) await pool.close();
      for (const receiver of receivers) await receiver.close();
    }
  });

  test('a slow endpoint does not delay a healthy one, and gets at most 20 requests at once', async () => {
    const caller = await t.newCaller();
    const slow = await startTestReceiver();
    const healthy = await startTestReceiver();
    await registerEndpoint(caller, slow.url);
    await registerEndpoint(caller, healthy.url);
    slow.answerWith(() => 'hold');
    // One endpoint per claim: the slow endpoint, at its cap with older deliveries still due, must
    // not take the healthy one's turn.
    const worker = workerFor(t, { endpointsPerClaim: 1 });
    try {
      worker.start();
      const newTransfer = transferFactory(t, caller);
      for (let index = 0; index < 25; index++) await newTransfer();
      await waitFor(() => eventsOf(healthy).length === 25, 5_000, 'the healthy endpoint');
      await waitFor(() => slow.inFlight === 20, 5_000, 'the slow endpoint at its cap');
      assert.equal(eventsOf(slow).length, 20, 'the other five wait for a free slot');
      // As the slow receiver answers, the rest follow; nothing is lost.
      while (eventsOf(slow).length < 25) {
        slow.release();
        await waitFor(() => slow.inFlight > 0 || eventsOf(slow).length === 25, 5_000, 'the next requests');
      }
      slow.release();
      assert.equal(slow.maxInFlight, 20);
      assert.equal(new Set(eventsOf(slow).map((delivery) => delivery.event.id)).size, 25);
    } finally {
      slow.release();
      await worker.close();
      await slow.close();
      await healthy.close();
    }
  });
});
