// The data the console's pages show, made as a running service makes it, for the pictures of its
// pages (tools/screenshots.ts) and their weight (bench/console.ts, test/console/weight.test.ts):
// real transfers through the API, the keeper and the webhook worker (completed, in flight and
// failed over a week), webhook deliveries with a retry, a resend, a test send and one waiting for
// its retry, and rewards with a claim paid on chain.
import { type Address, generateKeyPairSigner } from '@solana/kit';
import { failLastHop, runHops } from '../recovery/helpers.ts';
import { settleRoute } from '../rewards/helpers.ts';
import { workerFor } from '../webhooks/helpers.ts';
import { ADMIN_HEADERS, type Caller, callerFor, SOL_MINT, type TestApp } from './app.ts';
import { createMint } from './chain.ts';
import { startReceiver } from './receiver.ts';
import { deployRoute, quoteRoute } from './route.ts';
import { seedTransfers } from './seed-transfers.ts';

const DAY_MS = 24 * 3600_000;
/** Flat fees large enough that a few transfers earn more than the minimum claim, and no rate limit in the way. */
const SETTINGS = { rateLimitMultiplier: 1000, fees: { flatFeeLamportsPerHop: '1000000' } };

/** Calls the admin API; the call must succeed. */
async function admin(t: TestApp, url: string, payload: object) {
  const response = await t.app.inject({ method: 'POST', url, headers: ADMIN_HEADERS, payload });
  if (response.statusCode !== 200) throw new Error(`${url}: ${response.statusCode} ${response.body}`);
  return response.json();
}

/** Calls the API; the call must succeed. */
async function call(caller: Caller, method: 'GET' | 'POST', url: string, body?: object) {
  const response = method === 'GET' ? await caller.get(url) : await caller.post(url, body);
  if (response.statusCode !== 200)
    throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
  return response.json();
}

/**
 * Makes the data the pages show, on the app's manual clock (a week of it): answers the caller, its
 * webhook endpoint, the transfer in flight, the latest completed and the failed one, and the
 * receiver of the deliveries (to be closed).
 */
export async function makeConsoleData(t: TestApp) {
  const integration = await admin(t, '/admin/v1/integrations', { name: 'Acme Pay', settings: SETTINGS });
  const key = await admin(t, `/admin/v1/integrations/${integration.id}/keys`, { mode: 'test' });
  const caller = callerFor(t.app, integration.id, key);
  const receiver = await startReceiver({ status: 200, body: '{"received":true}' });
  const endpoint = await call(caller, 'POST', '/api/v1/webhooks', { url: receiver.url });
  await call(caller, 'POST', '/api/v1/webhooks', {
    url: `${receiver.url}/settled`,
    events: ['transfer.completed', 'transfer.failed', 'transfer.recoverable'],
  });
  const worker = workerFor(t);
  const usdc = await createMint(t.chain, { decimals: 6 });
  await call(caller, 'POST', '/api/v1/rewards/wallet', { wallet: (await generateKeyPairSigner()).address });

  // A week of completed transfers, one or two a day, in SOL and in a 6-decimal token; a claim midway.
  const days: Address[][] = [
    [SOL_MINT as Address],
    [usdc],
    [SOL_MINT as Address, usdc],
    [usdc],
    [SOL_MINT as Address],
  ];
  const completed: number[] = [];
  for (const [index, mints] of days.entries()) {
    for (const mint of mints) completed.push((await settleRoute(t, caller, mint)).id);
    await worker.runOnce();
    if (index === 2) await call(caller, 'POST', '/api/v1/rewards/claim', {});
    t.clock.advance(DAY_MS);
  }
  // Today: one transfer failed and recoverable, one in flight.
  const failed = await quoteRoute(t, caller, { hops: 3, mint: usdc, arrivalSeconds: 180 });
  await deployRoute(t, caller, failed);
  await failLastHop(t, failed);
  const flying = await quoteRoute(t, caller, { hops: 5, mint: SOL_MINT as Address, arrivalSeconds: 600 });
  await deployRoute(t, caller, flying);
  await runHops(t, flying.id, 2);
  await worker.runOnce();
  // The receiver has a bad moment: a new quote's event is refused, then delivered on the retry.
  receiver.respondWith({ status: 503, body: '{"error":"database unavailable, try again"}' });
  await quoteRoute(t, caller, { hops: 3, mint: usdc });
  await worker.runOnce();
  receiver.respondWith({ status: 200, body: '{"received":true}' });
  t.clock.advance(60_000);
  await worker.runOnce();
  // The in-flight transfer's latest event sent again, and a test send.
  const events = await call(caller, 'GET', `/api/v1/events?transferId=${flying.id}&limit=1`);
  await call(caller, 'POST', `/api/v1/events/${events.items[0].id}/resend`, { endpointId: endpoint.id });
  t.clock.advance(1_000);
  await worker.runOnce();
  await call(caller, 'POST', `/api/v1/webhooks/${endpoint.id}/test`);
  // Last, an event the receiver fails on, waiting for its retry.
  receiver.respondWith({ status: 500, body: 'Internal Server Error' });
  t.clock.advance(60_000);
  await quoteRoute(t, caller, { hops: 3, mint: SOL_MINT as Address });
  await worker.runOnce();
  await worker.close();
  return {
    caller,
    receiver,
    endpointId: endpoint.id as number,
    flying: flying.id,
    completed: completed.at(-1)!,
    failed: failed.id,
  };
}

/**
 * Forty transfers older than those of {@link makeConsoleData}, inserted straight into the store, so
 * that the transfers list shows a full first page and its pager, as a busy integration's does.
 */
export async function seedOlderTransfers(t: TestApp, integrationId: number): Promise<void> {
  await seedTransfers(t.database.db, {
    integrationId,
    mode: 'test',
    count: 40,
    start: new Date(t.clock.now().getTime() - 60 * DAY_MS),
    days: 30,
  });
}
