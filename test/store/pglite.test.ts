import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { generateKeyPairSigner } from '@solana/kit';
import { pino } from 'pino';
import { createPgliteDb } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';
import { createExpiryWorker } from '../../src/workers/expiry.ts';
import { callerFor, createTestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';

test('smoke run on embedded PGlite: migrations, keys, quotes, events, idempotency, listing and its totals, expiry, usage, keeper health', async () => {
  const db = await createPgliteDb();
  await migrate(db);
  const t = await createTestApp({ wrapDb: () => db });
  try {
    const integration = await t.createIntegration({ rateLimitMultiplier: 100 });
    const caller = callerFor(t.app, integration.id, await t.createKey(integration.id));
    const mint = await createMint(t.chain, { decimals: 6 });
    const body = {
      tokenMint: mint,
      amountRaw: '12500000',
      amountTokens: '12.5',
      sourceOwner: (await generateKeyPairSigner()).address,
      recipientWallet: (await generateKeyPairSigner()).address,
      tokenPriceUsd: 1,
      externalId: 'pglite-1',
    };
    const key = { 'idempotency-key': `pglite-${randomBytes(4).toString('hex')}` };
    const created = await caller.post('/api/v1/transfers', body, key);
    assert.equal(created.statusCode, 200, created.body);
    const replay = await caller.post('/api/v1/transfers', body, key);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, created.body);
    assert.equal((await caller.post('/api/v1/transfers', body)).json().id, created.json().id);

    const listed = (await caller.get('/api/v1/transfers')).json();
    assert.deepEqual(listed.pagination, { total: 1, limit: 50, offset: 0, hasMore: false });
    assert.equal(listed.items[0].amountRaw, '12500000');
    const after = (await caller.get(`/api/v1/transfers?startingAfter=${created.json().id}`)).json();
    assert.deepEqual(after, { items: [], pagination: { total: 1, limit: 50, offset: 0, hasMore: false } });

    t.clock.advance(15 * 60_000);
    const expired = await createExpiryWorker({
      transfers: t.store.transfers,
      clock: t.clock,
      log: pino({ level: 'silent' }),
    }).runOnce();
    assert.equal(expired, 1);
    const totals = async (query: string) =>
      (await caller.get(`/api/v1/transfers?limit=1${query}`)).json().pagination.total;
    const window = `&fromDate=${new Date(t.clock.now().getTime() - 86_400_000).toISOString()}`;
    assert.deepEqual(
      [await totals('&status=expired'), await totals('&status=quote'), await totals(window)],
      [1, 0, 1],
    );
    assert.ok((await t.store.transferTotals.rollUp(100)) > 0);
    assert.deepEqual(
      [await totals('&status=expired'), await totals('&status=quote'), await totals(window)],
      [1, 0, 1],
    );
    const events = await db.query<{ type: string; sequence: number }>(
      'SELECT type, sequence FROM events ORDER BY sequence',
    );
    assert.deepEqual(events.rows, [
      { type: 'transfer.quote_created', sequence: 1 },
      { type: 'transfer.phase_changed', sequence: 2 },
      { type: 'transfer.expired', sequence: 3 },
    ]);
    const usage = (await caller.get('/api/v1/usage')).json();
    assert.equal(usage.expiredTransfers, 1);
    assert.equal(usage.totalTransfers, 1);

    // The keeper's health, percentiles included, reads on PGlite too.
    const health = await t.store.keeperHealth.read({ chainNow: 0n, now: t.clock.now(), limit: 5 });
    assert.deepEqual(health.routes, { total: 0, held: 0, waiting: 0, backingOff: 0, scheduled: 0 });
    assert.deepEqual(health.lateness.lastDay, { hops: 0, p50: null, p99: null, max: null });
    assert.deepEqual(health.failures, { total: 0, latest: [] });
    assert.deepEqual(health.workers, [], 'the app registers its worker in its PostgreSQL database');
  } finally {
    await t.close();
    await db.close();
  }
});
