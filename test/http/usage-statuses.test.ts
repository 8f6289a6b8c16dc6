// GET /usage counts every transfer once, under the status it has now: transfers taken to each
// status through the API, the keeper and the chain fill one bucket each, and the buckets add up
// to the total.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { pino } from 'pino';
import { TRANSFER_STATUSES } from '../../src/domain/transfer.ts';
import { createExpiryWorker } from '../../src/workers/expiry.ts';
import { type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { deployRoute, quoteRoute } from '../helpers/route.ts';
import { failLastHop, getTransfer, rescueThroughApi, runHops, UNLIMITED } from '../recovery/helpers.ts';

let t: TestApp;
let caller: Caller;
before(async () => {
  t = await createTestApp();
  caller = await t.newCaller('test', UNLIMITED);
});
after(() => t.close());

test('every status has its bucket, and the buckets add up to the total', async () => {
  const mint = await createMint(t.chain, { decimals: 6 });
  const quote = () => quoteRoute(t, caller, { hops: 3, mint, arrivalSeconds: 600 });
  const ids: number[] = [];

  const expired = await quote();
  t.clock.advance(15 * 60_000);
  const expiry = createExpiryWorker({
    transfers: t.store.transfers,
    clock: t.clock,
    log: pino({ level: 'silent' }),
  });
  assert.equal(await expiry.runOnce(), 1);
  ids.push(expired.id);

  const completed = await quote();
  await deployRoute(t, caller, completed);
  await runHops(t, completed.id, 3);
  ids.push(completed.id);

  const failed = await quote();
  await deployRoute(t, caller, failed);
  await failLastHop(t, failed);
  ids.push(failed.id);

  const refunded = await quote();
  await deployRoute(t, caller, refunded);
  await failLastHop(t, refunded);
  await rescueThroughApi(t, caller, refunded);
  ids.push(refunded.id);

  const processing = await quote();
  await deployRoute(t, caller, processing);
  ids.push(processing.id);

  const awaiting = await quote();
  const prepared = await caller.post(`/api/v1/transfers/${awaiting.id}/prepare`);
  assert.equal(prepared.statusCode, 200, prepared.body);
  ids.push(awaiting.id);

  ids.push((await quote()).id);

  const statuses = await Promise.all(ids.map(async (id) => (await getTransfer(caller, id)).status));
  assert.deepEqual([...statuses].sort(), [...TRANSFER_STATUSES].sort(), 'one transfer in each status');

  const usage = await caller.get('/api/v1/usage');
  assert.equal(usage.statusCode, 200, usage.body);
  const { totalVolumeUsd, totalRevenueLamports, revenueByMint, isTestMode, fromDate, toDate, ...counts } =
    usage.json();
  assert.deepEqual(counts, {
    totalTransfers: 7,
    quoteTransfers: 1,
    awaitingSignatureTransfers: 1,
    processingTransfers: 1,
    completedTransfers: 1,
    failedTransfers: 1,
    expiredTransfers: 1,
    refundedTransfers: 1,
  });
  const { totalTransfers, ...buckets } = counts as Record<string, number>;
  assert.equal(
    Object.values(buckets).reduce((sum, count) => sum + count, 0),
    totalTransfers,
    'the buckets add up to the total',
  );
  assert.equal(totalVolumeUsd, 250, 'the volume counts the completed transfer only');
});
