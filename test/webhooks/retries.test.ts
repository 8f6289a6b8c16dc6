import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { verifyWebhook } from '../../clients/typescript/src/webhooks.ts';
import { nominalRetryDelayMs, nominalSchedule } from '../../src/domain/webhook-retry.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { otherWorkerProcess } from '../helpers/database.ts';
import {
  createTransfer,
  deliveryRows,
  emit,
  registerEndpoint,
  startTestReceiver,
  type TestReceiver,
  transferFactory,
  workerFor,
} from './helpers.ts';

const START = Date.parse('2026-06-01T12:00:00.000Z');
const eventsOf = (receiver: TestReceiver) =>
  receiver.received.filter((delivery) => delivery.event.type !== 'ping');

describe('webhook retries', () => {
  // Each test gets a database of its own: a worker delivers whatever is due in its database, and
  // these tests move the clock back and forth.
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({
      config: { webhookPingTimeoutMs: 500 },
    });
  });
  afterEach(() => t.close());

  /** Puts the clock at `offsetMs` after the test app's start. */
  const at = (offsetMs: number) => t.clock.set(new Date(START + offsetMs));

  test('a receiver answering 500 gets retries on the schedule, then the event; every attempt is logged', async () => {
    at(0);
    const caller = await t.newCaller();
    const receiver = await startTestReceiver();
    const worker = workerFor(t);
    try {
      const endpoint = await registerEndpoint(caller, receiver.url);
      receiver.answerWith(() => ({ status: 500 }));
      const transfer = await createTransfer(caller);
      const schedule = nominalSchedule();
      assert.equal(await worker.runOnce(), 1);
      for (const offset of schedule.slice(1, 4)) {
        at(offset - 1);
        assert.equal(await worker.runOnce(), 0, `nothing due before ${offset} ms`);
        at(offset);
        assert.equal(await worker.runOnce(), 1, `attempt at ${offset} ms`);
      }
      receiver.answerWith(() => ({ status: 204 }));
      at(schedule[4]!);
      assert.equal(await worker.runOnce(), 1);
      at(schedule[8]!);
      assert.equal(await worker.runOnce(), 0, 'delivered: no more attempts');

      const received = eventsOf(receiver);
      assert.equal(received.length, 5);
      assert.equal(
        new Set(received.map((delivery) => delivery.event.id)).size,
        1,
        'the same event each time',
      );
      assert.equal(received[0]!.event.data.transfer?.id, transfer.id);

      const log = await caller.get(`/api/v1/webhooks/${endpoint.id}/deliveries`);
      assert.equal(log.statusCode, 200);
      const eventId = received[0]!.event.id;
      assert.deepEqual(log.json(), {
        items: [4, 3, 2, 1, 0].map((index) => ({
          id: log.json().items[4 - index].id,
          eventId,
          eventType: 'transfer.quote_created',
          trigger: 'event',
          attempt: index + 1,
          attemptedAt: new Date(START + schedule[index]!).toISOString(),
          success: index === 4,
          responseStatus: index === 4 ? 204 : 500,
          // A 204 has no body.
          responseBody: index === 4 ? '' : 'ok',
          durationMs: log.json().items[4 - index].durationMs,
          error: null,
        })),
        pagination: { total: 5, limit: 50, offset: 0 },
      });
      const failures = await caller.get(`/api/v1/webhooks/${endpoint.id}/deliveries?success=false&limit=2`);
      assert.deepEqual(
        failures.json().items.map((item: { attempt: number }) => item.attempt),
        [4, 3],
      );
      assert.deepEqual(failures.json().pagination, { total: 4, limit: 2, offset: 0 });
    } finally {
      await worker.close();
      await receiver.close();
    }
  });

  test('a receiver that times out or refuses connections gets retries and then everything', async () => {
    at(0);
    const caller = await t.newCaller();
    const receiver = await startTestReceiver();
    const worker = workerFor(t, { timeoutMs: 100 });
    try {
      const endpoint = await registerEndpoint(caller, receiver.url);
      receiver.answerWith(() => 'hold');
      const transfer = await createTransfer(caller);
      await emit(t, caller, transfer.id, ['transfer.phase_changed']);
      assert.equal(await worker.runOnce(), 1);
      receiver.release();

      await receiver.stop();
      at(10_000);
      assert.equal(await worker.runOnce(), 1);

      await receiver.restart();
      receiver.answerWith(() => ({ status: 200 }));
      at(40_000);
      assert.equal(await worker.runOnce(), 2, 'the first event, then the one that waited behind it');

      const log = (await caller.get(`/api/v1/webhooks/${endpoint.id}/deliveries`)).json().items.reverse();
      assert.deepEqual(
        log.map((item: { attempt: number; success: boolean; responseStatus: number | null }) => [
          item.attempt,
          item.success,
          item.responseStatus,
        ]),
        [
          [1, false, null],
          [2, false, null],
          [3, true, 200],
          [1, true, 200],
        ],
      );
      assert.equal(log[0].error, 'no response within 100 ms');
      assert.match(log[1].error, /ECONNREFUSED/);
      // The held request reached the receiver before it timed out: at least once, deduplicated by id.
      assert.deepEqual(
        eventsOf(receiver).map((delivery) => delivery.event.sequence),
        [1, 1, 2],
      );
      assert.deepEqual(
        (await deliveryRows(t, endpoint.id)).map((row) => [row.status, row.attempts]),
        [
          ['succeeded', 3],
          ['succeeded', 1],
        ],
      );
    } finally {
      await worker.close();
      await receiver.close();
    }
  });

  test('after 3 days of failure the endpoint is disabled; re-enabling resumes, resend recovers the rest', async () => {
    at(0);
    const caller = await t.newCaller();
    const receiver = await startTestReceiver();
    const worker = workerFor(t);
    try {
      const endpoint = await registerEndpoint(caller, receiver.url);
      receiver.answerWith(() => ({ status: 500 }));
      const first = await createTransfer(caller);
      const schedule = nominalSchedule();
      assert.equal(schedule.length, 17);
      for (const offset of schedule) {
        at(offset);
        await worker.runOnce();
        // A second transfer's event 17 h in, while the endpoint is failing.
        if (offset === schedule[9]) await createTransfer(caller);
      }
      const listed = (await caller.get('/api/v1/webhooks')).json().items;
      assert.deepEqual(
        listed.map((item: { id: number; isActive: boolean }) => [item.id, item.isActive]),
        [[endpoint.id, false]],
      );
      const { rows } = await t.database.db.query<{ disabled_at: Date; failing_since: Date }>(
        'SELECT disabled_at, failing_since FROM webhook_endpoints WHERE id = $1',
        [endpoint.id],
      );
      assert.deepEqual(rows, [
        { disabled_at: new Date(START + schedule.at(-1)!), failing_since: new Date(START) },
      ]);
      const states = await deliveryRows(t, endpoint.id);
      assert.deepEqual(
        states.map((row) => [row.status, row.attempts]),
        [
          ['failed', 17],
          ['pending', 7],
        ],
      );
      assert.equal(eventsOf(receiver).length, 17 + 7);

      // Disabled: nothing more is sent, not even what comes due, and new events are not queued for it.
      at(schedule.at(-1)! + 24 * 3600 * 1000);
      await emit(t, caller, first.id, ['transfer.expired'], { status: 'expired', phase: 'expired' });
      assert.equal(await worker.runOnce(), 0);
      assert.equal((await deliveryRows(t, endpoint.id)).length, 2);

      receiver.answerWith(() => ({ status: 200 }));
      const enabled = await caller.post(`/api/v1/webhooks/${endpoint.id}/enable`);
      assert.equal(enabled.statusCode, 200);
      assert.deepEqual(enabled.json(), {
        id: endpoint.id,
        url: receiver.url,
        secret: null,
        events: enabled.json().events,
        isActive: true,
        createdAt: new Date(START).toISOString(),
      });
      assert.equal(await worker.runOnce(), 1, 'the pending delivery resumes at once');

      const undelivered = (await caller.get('/api/v1/events?deliverySuccess=false')).json();
      assert.deepEqual(
        undelivered.items.map((item: { type: string; sequence: number; deliverySuccess: boolean }) => [
          item.type,
          item.sequence,
          item.deliverySuccess,
        ]),
        [
          ['transfer.expired', 2, false],
          ['transfer.quote_created', 1, false],
        ],
      );
      for (const item of undelivered.items) {
        const resent = await caller.post(`/api/v1/events/${item.id}/resend`);
        assert.equal(resent.statusCode, 200, resent.body);
      }
      assert.equal(await worker.runOnce(), 2);
      assert.deepEqual((await caller.get('/api/v1/events?deliverySuccess=false')).json().items, []);
      assert.deepEqual(
        eventsOf(receiver)
          .slice(-3)
          .map((delivery) => [delivery.event.data.transfer?.id, delivery.event.sequence]),
        [
          [first.id + 1, 1],
          [first.id, 1],
          [first.id, 2],
        ],
      );
    } finally {
      await worker.close();
      await receiver.close();
    }
  });

  test('a failing endpoint is not disabled while other deliveries to it succeed', async () => {
    at(0);
    const caller = await t.newCaller();
    const receiver = await startTestReceiver();
    const worker = workerFor(t);
    try {
      const endpoint = await registerEndpoint(caller, receiver.url);
      const newTransfer = transferFactory(t, caller);
      const poison = await newTransfer();
      receiver.answerWith((delivery) =>
        delivery.event.data.transfer?.id === poison.id ? { status: 400 } : { status: 200 },
      );
      for (const offset of nominalSchedule()) {
        at(offset);
        await newTransfer();
        await worker.runOnce();
      }
      const states = await deliveryRows(t, endpoint.id);
      assert.deepEqual(states[0]!.status, 'failed');
      assert.equal(states.filter((row) => row.status === 'succeeded').length, 17);
      assert.equal((await caller.get('/api/v1/webhooks')).json().items[0].isActive, true);
    } finally {
      await worker.close();
      await receiver.close();
    }
  });

  test('a receiver down while the service restarts still gets every event afterwards', async () => {
    at(0);
    const caller = await t.newCaller();
    const receiver = await startTestReceiver();
    const endpoint = await registerEndpoint(caller, receiver.url);
    await receiver.stop();
    const transfers = [await createTransfer(caller), await createTransfer(caller)];
    for (const transfer of transfers) {
      await emit(t, caller, transfer.id, ['transfer.phase_changed', 'transfer.processing']);
    }
    const first = workerFor(t);
    first.start();
    const attempted = async () =>
      (
        await t.database.db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE endpoint_id = $1',
          [endpoint.id],
        )
      ).rows[0]!.n;
    await waitForValue(attempted, 2);
    await first.close();

    // Another worker process claims a delivery: while it is alive, no one else takes it (nor the
    // transfer's later events).
    at(10_000);
    const other = await otherWorkerProcess(t.database.db);
    const crashed = await t.store.deliveries.claim({
      now: t.clock.now(),
      worker: other.id,
      limit: 1,
      perEndpoint: 10,
      perFailingEndpoint: 1,
      maxEndpoints: 10,
    });
    assert.equal(crashed.length, 1);

    await receiver.restart();
    const second = workerFor(t);
    try {
      at(600_000);
      assert.equal(await second.runOnce(), 0, 'held by a live worker and blocked behind it');
      // It dies holding the delivery (it says nothing more): the delivery is tried again on the
      // retry schedule from its attempt, as a failed attempt would be, not after a lease of minutes.
      at(10_000);
      await other.die();
      const [held] = (
        await t.database.db.query<{ next_attempt_at: Date; attempts: number }>(
          'SELECT next_attempt_at, attempts FROM webhook_deliveries WHERE id = $1',
          [crashed[0]!.id],
        )
      ).rows;
      assert.equal(
        held!.next_attempt_at.getTime() - t.clock.now().getTime(),
        nominalRetryDelayMs(held!.attempts),
      );
      assert.equal(
        await second.runOnce(),
        3,
        "the failing endpoint's one slot is free again: the other transfer's events go",
      );
      const { rows: still } = await t.database.db.query<{ attempts: number }>(
        'SELECT attempts FROM webhook_deliveries WHERE id = $1',
        [crashed[0]!.id],
      );
      assert.equal(still[0]!.attempts, held!.attempts, 'the dead worker’s delivery waits for its retry');
      t.clock.set(held!.next_attempt_at);
      second.start();
      await waitForValue(async () => eventsOf(receiver).length, 6);
      await waitForValue(
        async () => (await deliveryRows(t, endpoint.id)).filter((row) => row.status === 'succeeded').length,
        6,
      );
      const byTransfer = transfers.map((transfer) =>
        eventsOf(receiver)
          .filter((delivery) => delivery.event.data.transfer?.id === transfer.id)
          .map((delivery) => delivery.event.sequence),
      );
      assert.deepEqual(byTransfer, [
        [1, 2, 3],
        [1, 2, 3],
      ]);
      assert.deepEqual(
        (await deliveryRows(t, endpoint.id)).map((row) => row.status),
        ['succeeded', 'succeeded', 'succeeded', 'succeeded', 'succeeded', 'succeeded'],
      );
    } finally {
      await second.close();
      await receiver.close();
    }
  });

  test('rotation: during the overlap deliveries carry both signatures; afterwards only the new one', async () => {
    at(0);
    const caller = await t.newCaller();
    const receiver = await startTestReceiver();
    const worker = workerFor(t);
    try {
      const endpoint = await registerEndpoint(caller, receiver.url);
      const rotated = await caller.post(`/api/v1/webhooks/${endpoint.id}/rotate-secret`);
      assert.equal(rotated.statusCode, 200);
      const newSecret = rotated.json().secret;
      assert.match(newSecret, /^whsec_[A-Za-z0-9_-]{43}$/);
      assert.notEqual(newSecret, endpoint.secret);
      assert.deepEqual(rotated.json(), {
        id: endpoint.id,
        url: receiver.url,
        secret: newSecret,
        events: rotated.json().events,
        isActive: true,
        createdAt: new Date(START).toISOString(),
        previousSecretExpiresAt: new Date(START + 24 * 3600 * 1000).toISOString(),
      });
      assert.equal(
        (await caller.get('/api/v1/webhooks')).json().items[0].secret,
        null,
        'the new secret is shown once',
      );

      const transfer = await createTransfer(caller);
      assert.equal(await worker.runOnce(), 1);
      const during = eventsOf(receiver).at(-1)!;
      const header = String(during.headers['mh-signature']);
      assert.match(header, /^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
      const now = t.clock.now();
      assert.equal(verifyWebhook(during.body, header, endpoint.secret, { now }).id, during.event.id);
      assert.equal(verifyWebhook(during.body, header, newSecret, { now }).id, during.event.id);

      at(24 * 3600 * 1000);
      await emit(t, caller, transfer.id, ['transfer.expired'], { status: 'expired', phase: 'expired' });
      assert.equal(await worker.runOnce(), 1);
      const afterwards = eventsOf(receiver).at(-1)!;
      const single = String(afterwards.headers['mh-signature']);
      assert.match(single, /^t=\d+,v1=[0-9a-f]{64}$/);
      assert.equal(
        verifyWebhook(afterwards.body, single, newSecret, { now: t.clock.now() }).id,
        afterwards.event.id,
      );
      assert.throws(() => verifyWebhook(afterwards.body, single, endpoint.secret, { now: t.clock.now() }), {
        code: 'signature_mismatch',
      });

      // Rotating with no overlap drops the replaced secret at once.
      const again = (
        await caller.post(`/api/v1/webhooks/${endpoint.id}/rotate-secret`, { overlapSeconds: 0 })
      ).json();
      assert.equal(again.previousSecretExpiresAt, null);
      const test = await caller.post(`/api/v1/webhooks/${endpoint.id}/test`);
      assert.equal(test.json().success, true);
      const ping = receiver.received.at(-1)!;
      assert.match(String(ping.headers['mh-signature']), /^t=\d+,v1=[0-9a-f]{64}$/);
      assert.equal(
        verifyWebhook(ping.body, ping.headers['mh-signature'], again.secret, { now: t.clock.now() }).type,
        'ping',
      );
    } finally {
      await worker.close();
      await receiver.close();
    }
  });

  test('deleting an endpoint stops its deliveries', async () => {
    at(0);
    const caller = await t.newCaller();
    const receiver = await startTestReceiver();
    const worker = workerFor(t);
    try {
      const endpoint = await registerEndpoint(caller, receiver.url);
      receiver.answerWith(() => ({ status: 500 }));
      await createTransfer(caller);
      assert.equal(await worker.runOnce(), 1);
      assert.deepEqual((await caller.delete(`/api/v1/webhooks/${endpoint.id}`)).json(), { deleted: true });
      receiver.answerWith(() => ({ status: 200 }));
      at(3600 * 1000);
      await createTransfer(caller);
      assert.equal(await worker.runOnce(), 0);
      assert.equal(eventsOf(receiver).length, 1);
    } finally {
      await worker.close();
      await receiver.close();
    }
  });
});

async function waitForValue(read: () => Promise<number>, expected: number, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (value < expected) {
    if (Date.now() > deadline) throw new Error(`timed out: ${value} of ${expected}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
    value = await read();
  }
  assert.equal(value, expected);
}
