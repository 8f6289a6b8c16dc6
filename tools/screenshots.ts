// npm run screenshots: pictures of every page of the console, as a person sees them, for the docs
// (docs/console/*.png). It runs the real app as the tests do (test/helpers/app.ts) on embedded
// PGlite and the embedded chain, on a free port, with a manual clock so that the dates shown are
// the same on every run; makes real data through the API, the keeper and the webhook worker
// (transfers completed, in flight and failed over a week, webhook deliveries with a retry, a resend,
// a test send and one waiting for its retry, rewards with a claim paid on chain); signs in with Chromium as the browser
// tests do (and to the operator's console with the admin token), and saves each page at a desktop's
// width (1280 px) and the usage page at a phone's (375 px).
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type Address, generateKeyPairSigner } from '@solana/kit';
import type { Page } from 'playwright-core';
import { createPgliteDb } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';
import {
  ADMIN_HEADERS,
  ADMIN_TOKEN,
  type Caller,
  callerFor,
  createTestApp,
  SOL_MINT,
  type TestApp,
} from '../test/helpers/app.ts';
import { launchBrowser } from '../test/helpers/browser.ts';
import { createMint } from '../test/helpers/chain.ts';
import { startReceiver } from '../test/helpers/receiver.ts';
import { deployRoute, quoteRoute } from '../test/helpers/route.ts';
import { failLastHop, runHops } from '../test/recovery/helpers.ts';
import { settleRoute } from '../test/rewards/helpers.ts';
import { workerFor } from '../test/webhooks/helpers.ts';

const OUT = join(import.meta.dirname, '..', 'docs', 'console');
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

/** Makes the data the pages show; answers the caller, an endpoint and two transfers worth a look. */
async function makeData(t: TestApp) {
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
  for (const [index, mints] of days.entries()) {
    for (const mint of mints) await settleRoute(t, caller, mint);
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
  return { caller, receiver, endpointId: endpoint.id as number, flying: flying.id };
}

/** Saves the page at `path` (of the console) as docs/console/<name>.png, the whole page's height. */
async function shoot(page: Page, path: string, name: string) {
  await page.goto(path);
  await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true, animations: 'disabled' });
  process.stdout.write(`docs/console/${name}.png  ${path}\n`);
}

async function main() {
  const db = await createPgliteDb();
  await migrate(db);
  const t = await createTestApp({ database: { url: 'pglite://memory', db, drop: () => db.close() } });
  const browser = await launchBrowser();
  try {
    const data = await makeData(t);
    const origin = new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).origin;
    await mkdir(OUT, { recursive: true });
    /** A page signed in with the integration's key, at `width` px; the sign-in form saved first if named. */
    const signedIn = async (width: number, signInName?: string) => {
      const context = await browser.newContext({ viewport: { width, height: 800 }, baseURL: origin });
      const page = await context.newPage();
      await page.goto('/dashboard/sign-in');
      if (signInName) await shoot(page, '/dashboard/sign-in', signInName);
      await page.getByLabel('API key').fill(data.caller.key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL('**/dashboard/transfers');
      return { context, page };
    };
    const desktop = await signedIn(1280, 'sign-in');
    await shoot(desktop.page, '/dashboard/transfers', 'transfers');
    await shoot(desktop.page, `/dashboard/transfers/${data.flying}`, 'transfer');
    await shoot(desktop.page, '/dashboard/webhooks', 'webhooks');
    await shoot(desktop.page, `/dashboard/webhooks/${data.endpointId}`, 'webhook');
    await shoot(desktop.page, '/dashboard/usage?days=7', 'usage');
    await shoot(desktop.page, '/dashboard/earnings', 'earnings');
    await desktop.context.close();
    const operator = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: origin });
    const operatorPage = await operator.newPage();
    await shoot(operatorPage, '/dashboard/operator/sign-in', 'operator-sign-in');
    await operatorPage.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await operatorPage.getByRole('button', { name: 'Sign in' }).click();
    await operatorPage.waitForURL('**/dashboard/operator/integrations');
    await shoot(operatorPage, '/dashboard/operator/integrations', 'operator-integrations');
    await shoot(
      operatorPage,
      `/dashboard/operator/integrations/${data.caller.integrationId}`,
      'operator-integration',
    );
    await shoot(operatorPage, '/dashboard/operator/platform', 'operator-platform');
    await shoot(operatorPage, '/dashboard/operator/keeper', 'operator-keeper');
    await operator.close();
    const phone = await signedIn(375);
    await shoot(phone.page, '/dashboard/usage?days=7', 'usage-phone');
    await phone.context.close();
    await data.receiver.close();
  } finally {
    await browser.close();
    await t.close();
    await t.database.drop();
  }
}

await main();
