import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { createHousekeepingWorker } from '../../src/workers/housekeeping.ts';
import { createTestApp, createTransfer, type TestApp } from '../helpers/app.ts';
import { startReceiver } from '../helpers/receiver.ts';

const DAY = 24 * 3600 * 1000;

/** The worker keeping idempotency records a day and events 30 days, deleting `batchSize` rows at a time. */
const housekeeping = (t: TestApp, batchSize: number) =>
  createHousekeepingWorker({
    retention: t.store.retention,
    clock: t.clock,
    log: pino({ level: 'silent' }),
    idempotencyTtlMs: DAY,
    eventRetentionMs: 30 * DAY,
    batchSize,
  });

test('housekeeping deletes expired idempotency records, old events with their deliveries, ended console sessions and the hop lateness past a day, and keeps the rest', async () => {
  const t = await createTestApp();
  const receiver = await startReceiver();
  try {
    const caller = await t.newCaller('test', { rateLimitMultiplier: 100 });
    await caller.post('/api/v1/webhooks', { url: receiver.url });
    const old = await createTransfer(caller);
    await t.database.db.query(`UPDATE webhook_deliveries SET status = 'succeeded'`);
    await t.database.db.query(
      `INSERT INTO webhook_delivery_attempts (endpoint_id, delivery_id, event_id, event_type, trigger, attempt, attempted_at, succeeded, status_code, duration_ms)
       SELECT endpoint_id, id, event_id, 'transfer.quote_created', 'event', 1, created_at, true, 200, 3 FROM webhook_deliveries`,
    );
    t.clock.advance(31 * DAY);
    const recent = await createTransfer(caller);
    // A worker process silent for a day (by the database's clock): its claims were long taken over.
    await t.database.db.query(
      `INSERT INTO worker_processes (id, name, seen_at)
       VALUES (gen_random_uuid(), 'gone:1', clock_timestamp() - interval '25 hours'),
              (gen_random_uuid(), 'away:2', clock_timestamp() - interval '23 hours')`,
    );

    // Console sessions: one that ended a second ago, one that ends in a second.
    const now = t.clock.now().getTime();
    for (const [token, endsIn] of [
      ['ended', -1000],
      ['open', 1000],
    ] as const) {
      await t.store.consoleSessions.open({
        tokenHash: Buffer.from(token),
        apiKeyId: caller.keyId,
        now: new Date(now - 3600_000),
        expiresAt: new Date(now + endsIn),
      });
    }

    // The hop lateness roll-up: a minute past the keeper page's day (and its hour's margin), one within it.
    await t.database.db.query(
      `INSERT INTO hop_lateness_minutes (minute, bucket, hops, least_seconds, most_seconds)
       VALUES ($1::timestamptz - interval '25 hours 1 minute', 0, 1, 1, 1),
              ($1::timestamptz - interval '24 hours 59 minutes', 0, 1, 1, 1)`,
      [t.clock.now()],
    );

    const worker = housekeeping(t, 1);
    const deleted = await worker.runOnce();
    assert.equal(deleted.hopLateness, 1);
    assert.equal(deleted.events, 1);
    assert.equal(deleted.silentWorkers, 1);
    assert.equal(deleted.consoleSessions, 1);
    assert.deepEqual(
      (await t.database.db.query<{ token_hash: Buffer }>('SELECT token_hash FROM console_sessions')).rows.map(
        (row) => Buffer.from(row.token_hash).toString(),
      ),
      ['open'],
      'a session still open is kept',
    );
    assert.ok(deleted.idempotencyRecords >= 2, 'the old create and the endpoint registration');

    const count = async (sql: string) => (await t.database.db.query<{ n: number }>(sql)).rows[0]!.n;
    assert.equal(await count(`SELECT count(*)::int AS n FROM events WHERE transfer_id = ${old.id}`), 0);
    assert.equal(await count(`SELECT count(*)::int AS n FROM events WHERE transfer_id = ${recent.id}`), 1);
    assert.equal(
      await count(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE transfer_id = ${old.id}`),
      0,
    );
    assert.equal(await count(`SELECT count(*)::int AS n FROM webhook_delivery_attempts`), 0);
    assert.equal(
      await count(`SELECT count(*)::int AS n FROM idempotency_keys`),
      1,
      'only the recent create is remembered',
    );
    assert.equal(await count(`SELECT count(*)::int AS n FROM transfers`), 2, 'transfers themselves are kept');
    assert.equal(
      await count(`SELECT count(*)::int AS n FROM worker_processes WHERE name IN ('gone:1', 'away:2')`),
      1,
      'a process silent for less than a day is kept',
    );
    assert.deepEqual(await worker.runOnce(), {
      idempotencyRecords: 0,
      events: 0,
      testAttempts: 0,
      silentWorkers: 0,
      consoleSessions: 0,
      hopLateness: 0,
    });
  } finally {
    await receiver.close();
    await t.close();
  }
});

test('an old event still being delivered to an active endpoint is kept until its delivery ends', async () => {
  const t = await createTestApp();
  const receiver = await startReceiver();
  try {
    const caller = await t.newCaller('test', { rateLimitMultiplier: 100 });
    const active = (await caller.post('/api/v1/webhooks', { url: receiver.url })).json();
    const removed = (await caller.post('/api/v1/webhooks', { url: `${receiver.url}?removed` })).json();
    const transfer = await createTransfer(caller);
    assert.equal((await caller.delete(`/api/v1/webhooks/${removed.id}`)).statusCode, 200);
    t.clock.advance(31 * DAY);
    const worker = housekeeping(t, 10);
    const events = async () =>
      (
        await t.database.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM events WHERE transfer_id = ${transfer.id}`,
        )
      ).rows[0]!.n;
    // Pending to the active endpoint (a pending delivery to the deleted one holds nothing back).
    assert.equal((await worker.runOnce()).events, 0);
    assert.equal(await events(), 1);
    await t.database.db.query(`UPDATE webhook_deliveries SET status = 'succeeded' WHERE endpoint_id = $1`, [
      active.id,
    ]);
    assert.equal((await worker.runOnce()).events, 1);
    assert.equal(await events(), 0);
  } finally {
    await receiver.close();
    await t.close();
  }
});
