import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, generateKeyPairSigner } from '@solana/kit';
import { pino } from 'pino';
import { accrueRewards } from '../../src/store/rewards.ts';
import { type TransferRow, toTransfer } from '../../src/store/transfer-rows.ts';
import { createExpiryWorker } from '../../src/workers/expiry.ts';
import { type Caller, callerFor, createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';

const UNLIMITED = { rateLimitMultiplier: 1000 };
const wallet = async () => (await generateKeyPairSigner()).address;

describe('quote expiry', () => {
  let t: TestApp;
  let caller: Caller;
  let body: Record<string, unknown>;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', UNLIMITED);
    const mint = await createMint(t.chain, { decimals: 6 });
    body = {
      tokenMint: mint,
      amountRaw: '5000000',
      amountTokens: '5',
      sourceOwner: await wallet(),
      recipientWallet: await wallet(),
      tokenPriceUsd: 1,
    };
  });
  after(() => t.close());

  const worker = () =>
    createExpiryWorker({
      transfers: t.store.transfers,
      clock: t.clock,
      log: pino({ level: 'silent' }),
      batchSize: 2,
    });

  test('a quote past expiresAt becomes expired, with phase, timestamps and events, exactly once', async () => {
    const quote = (await caller.post('/api/v1/transfers', body)).json();
    const other = (await caller.post('/api/v1/transfers', body)).json();
    t.clock.advance(14 * 60_000);
    const fresh = (await caller.post('/api/v1/transfers', body)).json();
    assert.equal(await worker().runOnce(), 0, 'nothing is due before expiresAt');

    t.clock.advance(60_000);
    // Two workers racing over the same due quotes (batches of 2) expire each exactly once.
    const [first, second] = await Promise.all([worker().runOnce(), worker().runOnce()]);
    assert.equal(first + second, 2);
    assert.equal(await worker().runOnce(), 0);

    const expired = (await caller.get(`/api/v1/transfers/${quote.id}`)).json();
    assert.equal(expired.status, 'expired');
    assert.equal(expired.phase, 'expired');
    assert.equal(expired.recovery, null);
    assert.equal(expired.expiresAt, '2026-06-01T12:15:00.000Z');
    assert.equal((await caller.get(`/api/v1/transfers/${other.id}`)).json().status, 'expired');
    assert.equal((await caller.get(`/api/v1/transfers/${fresh.id}`)).json().status, 'quote');

    const { rows } = await t.database.db.query<{
      type: string;
      sequence: number;
      payload: { data: { transfer: { status: string } } };
    }>('SELECT type, sequence, payload FROM events WHERE transfer_id = $1 ORDER BY sequence', [quote.id]);
    assert.deepEqual(
      rows.map((row) => [row.type, row.sequence, row.payload.data.transfer.status]),
      [
        ['transfer.quote_created', 1, 'quote'],
        ['transfer.phase_changed', 2, 'expired'],
        ['transfer.expired', 3, 'expired'],
      ],
    );
    const stamps = await t.database.db.query<{ expired_at: Date }>(
      'SELECT expired_at FROM transfers WHERE id = $1',
      [quote.id],
    );
    assert.equal(stamps.rows[0]!.expired_at.toISOString(), '2026-06-01T12:15:00.000Z');
  });
});

describe('GET /usage', () => {
  let t: TestApp;
  let caller: Caller;
  let live: Caller;
  let mintA: Address;
  let mintB: Address;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', UNLIMITED);
    live = callerFor(t.app, caller.integrationId, await t.createKey(caller.integrationId, 'live'));
    mintA = await createMint(t.chain, { decimals: 6 });
    mintB = await createMint(t.chain, { decimals: 9 });
    const [source, recipient] = [await wallet(), await wallet()];
    const create = async (
      who: Caller,
      mint: Address,
      amountRaw: string,
      amountTokens: string,
      hops: number,
    ) =>
      (
        await who.post('/api/v1/transfers', {
          tokenMint: mint,
          amountRaw,
          amountTokens,
          sourceOwner: source,
          recipientWallet: recipient,
          tokenPriceUsd: 2,
          hops,
        })
      ).json();
    // Completion flows come with the keeper; here statuses are set directly to exercise the sums,
    // and a completed transfer credits its shares to the rewards ledger as settlement does.
    const setStatus = (id: number, status: string) =>
      t.database.db.transaction(async (tx) => {
        const { rows } = await tx.query<TransferRow>(
          'UPDATE transfers SET status = $2 WHERE id = $1 RETURNING *',
          [id, status],
        );
        const transfer = toTransfer(rows[0]!);
        const shares = {
          percentShareRaw: transfer.integratorPercentShareRaw,
          flatShareLamports: transfer.integratorFlatShareLamports,
        };
        if (status === 'completed') await accrueRewards(tx, transfer, shares, t.clock.now());
      });
    // 100 A-tokens at 2 USD = 200 USD (standard, 100 bps): fee 1,000,000, integrator 300,000; flat 30,000 → 9,000.
    await setStatus((await create(caller, mintA, '100000000', '100', 3)).id, 'completed');
    // 50 B-tokens at 2 USD = 100 USD (standard): fee 0.5 B = 500,000,000, integrator 150,000,000; flat 50,000 → 15,000.
    await setStatus((await create(caller, mintB, '50000000000', '50', 5)).id, 'completed');
    await setStatus((await create(caller, mintA, '10000000', '10', 3)).id, 'failed');
    await setStatus((await create(caller, mintA, '10000000', '10', 3)).id, 'processing');
    await create(caller, mintA, '10000000', '10', 3);
    t.clock.advance(3600_000);
    // Later, and in live mode: outside the window / the test mode's figures.
    await setStatus((await create(caller, mintA, '100000000', '100', 3)).id, 'completed');
    await setStatus((await create(live, mintA, '100000000', '100', 3)).id, 'completed');
  });
  after(() => t.close());

  test('sums and counts over a window, per mode', async () => {
    const response = await caller.get(
      '/api/v1/usage?fromDate=2026-06-01T00:00:00Z&toDate=2026-06-01T12:30:00Z',
    );
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), {
      totalTransfers: 5,
      quoteTransfers: 1,
      awaitingSignatureTransfers: 0,
      processingTransfers: 1,
      completedTransfers: 2,
      failedTransfers: 1,
      expiredTransfers: 0,
      refundedTransfers: 0,
      totalVolumeUsd: 300,
      totalRevenueLamports: 24000,
      revenueByMint: { [mintA]: '300000', [mintB]: '150000000' },
      isTestMode: true,
      fromDate: '2026-06-01T00:00:00.000Z',
      toDate: '2026-06-01T12:30:00.000Z',
    });
  });

  test('without a window: everything of the key’s mode', async () => {
    const all = (await caller.get('/api/v1/usage')).json();
    assert.equal(all.totalTransfers, 6);
    assert.equal(all.completedTransfers, 3);
    assert.equal(all.totalRevenueLamports, 33000);
    assert.deepEqual(all.revenueByMint, { [mintA]: '600000', [mintB]: '150000000' });
    assert.equal(all.fromDate, null);
    const liveUsage = (await live.get('/api/v1/usage')).json();
    assert.equal(liveUsage.totalTransfers, 1);
    assert.equal(liveUsage.isTestMode, false);
    assert.deepEqual(liveUsage.revenueByMint, { [mintA]: '300000' });
  });

  test('another integration sees nothing', async () => {
    const stranger = await t.newCaller();
    const usage = (await stranger.get('/api/v1/usage')).json();
    assert.equal(usage.totalTransfers, 0);
    assert.deepEqual(usage.revenueByMint, {});
    assert.equal(usage.totalVolumeUsd, 0);
  });
});
