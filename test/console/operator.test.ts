// The operator's console in real Chromium against the real app on the test chain: refused without
// the admin token (a wrong one told so, an integrator's session let nowhere in), signed in with it
// by keyboard with the token in no URL, page, cookie or log line; the session bound to the admin
// token under a key of the deployment's; integrations and their keys, a key issued and shown once
// (a reload issuing no other) then used to sign in to the integrator's console, a key revoked and an
// integration suspended ending their sessions; the platform's wallets and what a shortfall breaks;
// the keeper's health with a route in flight, its hops' lateness, a failed route and the workers;
// labels, keyboard and a phone's width.
import assert from 'node:assert/strict';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { address } from '@solana/kit';
import { pino } from 'pino';
import type { Page } from 'playwright-core';
import { rawToTokens } from '../../src/domain/amounts.ts';
import { LIVE_KEY_ON_LOCAL_CHAIN } from '../../src/domain/api-keys.ts';
import { ADMIN_HEADERS, ADMIN_TOKEN, type Caller, createTestApp, SOL_MINT } from '../helpers/app.ts';
import { browserUnavailable } from '../helpers/browser.ts';
import { createMint } from '../helpers/chain.ts';
import { deployRoute, quoteRoute } from '../helpers/route.ts';
import { chainNow } from '../keeper/helpers.ts';
import { failLastHop, getTransfer, routeRow, UNLIMITED } from '../recovery/helpers.ts';
import {
  type ConsoleHarness,
  focused,
  formSignIn,
  horizontalOverflow,
  scriptCookies,
  signIn,
  startConsole,
  textOf,
  unlabelledControls,
} from './helpers.ts';

/** A time as the console shows every time: `2026-06-01 12:00:05 UTC`. */
const shown = (at: Date) => `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
const WRONG_TOKEN =
  'That is not this service’s admin token. Use the value of ADMIN_TOKEN (in local mode, the file admin-token in DATA_DIR).';

/** Signs in to the operator's console through its form, and waits for the integrations. */
async function signInAsOperator(page: Page): Promise<void> {
  await page.goto('/dashboard/operator/sign-in');
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL('**/dashboard/operator/integrations');
}

/** Waits until the element's text is exactly `text` (the keeper's page refreshes itself every 5 s). */
const waitForText = (page: Page, selector: string, text: string) =>
  page
    .locator(selector, { hasText: new RegExp(`^\\s*${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`) })
    .waitFor({ timeout: 20_000 });

describe('the operator’s console', { skip: browserUnavailable() }, () => {
  let h: ConsoleHarness;
  /** The app's log lines, every request's included. */
  const logs: string[] = [];
  before(async () => {
    h = await startConsole({ logger: pino({ level: 'info' }, { write: (line: string) => logs.push(line) }) });
  });
  after(() => h?.close());

  const sessionsOf = async (keyId: number) =>
    (await h.t.database.db.query('SELECT token_hash FROM console_sessions WHERE api_key_id = $1', [keyId]))
      .rows;

  test('refuses without the admin token: a wrong token is told so, and an integrator’s session opens no operator page', async () => {
    const { context, page } = await h.newPage();
    await page.goto('/dashboard/operator/keeper');
    assert.equal(
      page.url(),
      `${h.origin}/dashboard/operator/sign-in?next=%2Fdashboard%2Foperator%2Fkeeper`,
      'sent to the operator’s sign-in',
    );
    assert.deepEqual(await unlabelledControls(page), []);
    const caller = await h.t.newCaller('test');
    for (const wrong of [`${ADMIN_TOKEN}x`, caller.key]) {
      await page.getByLabel('Admin token').fill(wrong);
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.getByRole('button', { name: 'Sign in' }).click(),
      ]);
      assert.equal(response.status(), 401);
      assert.equal(await textOf(page, '[role="alert"]'), WRONG_TOKEN);
      assert.equal(await page.getByLabel('Admin token').getAttribute('aria-invalid'), 'true');
      assert.equal(await page.getByLabel('Admin token').inputValue(), '', 'the token is not sent back');
    }
    assert.deepEqual(await context.cookies(), []);

    // Signed in to the integrator's console, the same browser still meets the operator's sign-in.
    await signIn(page, caller.key);
    for (const path of ['integrations', `integrations/${caller.integrationId}`, 'platform', 'keeper']) {
      await page.goto(`/dashboard/operator/${path}`);
      assert.equal(new URL(page.url()).pathname, '/dashboard/operator/sign-in', path);
    }
    assert.deepEqual(
      (await context.cookies()).map((cookie) => cookie.name),
      ['tr_console'],
    );
    // Nor does the integrator's session token, presented as an operator's.
    const integratorToken = (await context.cookies())[0]!.value;
    const forged = await fetch(`${h.origin}/dashboard/operator/integrations`, {
      redirect: 'manual',
      headers: { cookie: `tr_operator=${integratorToken}` },
    });
    assert.equal(forged.status, 303);
    assert.equal(
      forged.headers.get('location'),
      '/dashboard/operator/sign-in?ended=expired&next=%2Fdashboard%2Foperator%2Fintegrations',
    );
    assert.equal((await sessionsOf(caller.keyId)).length, 1, 'and the integrator’s session is untouched');
    // Nor does a form posted from another site.
    const foreign = await fetch(`${h.origin}/dashboard/operator/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://elsewhere.example' },
      body: new URLSearchParams({ adminToken: ADMIN_TOKEN }).toString(),
    });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.headers.get('set-cookie'), null);
  });

  test('by keyboard with the admin token: Tab to the labelled field, type, Enter; the token shows nowhere but an operator’s cookie does', async () => {
    const { context, page } = await h.newPage();
    const urls: string[] = [];
    page.on('request', (request) => urls.push(request.url()));
    await page.goto('/dashboard/operator');
    assert.equal(new URL(page.url()).pathname, '/dashboard/operator/sign-in');
    for (let presses = 0; presses < 6 && (await focused(page)).id !== 'adminToken'; presses++) {
      await page.keyboard.press('Tab');
    }
    assert.equal((await focused(page)).id, 'adminToken', 'Tab reaches the token field');
    await page.keyboard.type(ADMIN_TOKEN);
    await page.keyboard.press('Enter');
    await page.waitForURL('**/dashboard/operator/integrations');
    assert.equal(await textOf(page, 'h1'), 'Integrations');
    assert.equal(await textOf(page, 'nav[aria-label="Operator"] [aria-current="page"]'), 'Integrations');

    assert.ok(!urls.some((url) => url.includes(ADMIN_TOKEN)), 'the token is in no URL');
    assert.ok(logs.some((line) => line.includes('"route":"/dashboard/operator/sign-in"')));
    assert.ok(!logs.some((line) => line.includes(ADMIN_TOKEN)), 'the token is in no log line');
    assert.ok(!(await page.content()).includes(ADMIN_TOKEN), 'the token is in no page');
    const cookies = await context.cookies();
    assert.deepEqual(
      cookies.map(({ name, path, httpOnly, sameSite, secure }) => ({
        name,
        path,
        httpOnly,
        sameSite,
        secure,
      })),
      [
        {
          name: 'tr_operator',
          path: '/dashboard/operator',
          httpOnly: true,
          sameSite: 'Strict',
          secure: false,
        },
      ],
    );
    assert.equal(await scriptCookies(page), '', 'scripts cannot read the session');
    // The database keeps an operator's session with the token's hash, no key and never the admin token.
    const { rows } = await h.t.database.db.query<{
      kind: string;
      api_key_id: string | null;
      admin_token_mac: Buffer;
    }>('SELECT kind, api_key_id, admin_token_mac FROM console_sessions WHERE token_hash = $1', [
      createHash('sha256').update(cookies[0]!.value).digest(),
    ]);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.kind, 'operator');
    assert.equal(rows[0]!.api_key_id, null);
    assert.ok(!Buffer.from(rows[0]!.admin_token_mac).includes(Buffer.from(ADMIN_TOKEN)));

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/dashboard/operator/sign-in?ended=signed-out');
    assert.equal(await textOf(page, '.notice'), 'You are signed out of the operator’s console.');
    await page.goto('/dashboard/operator/platform');
    assert.equal(new URL(page.url()).pathname, '/dashboard/operator/sign-in');
  });

  test('an admin token changed since the sign-in ends the operator’s sessions', async () => {
    const rotated = await createTestApp({ peer: h.t, config: { adminToken: `${ADMIN_TOKEN}-rotated` } });
    try {
      const cookie = await formSignIn(
        h.t.app,
        '/dashboard/operator/sign-in',
        { adminToken: ADMIN_TOKEN },
        'tr_operator',
      );
      const token = cookie.slice('tr_operator='.length);
      const page = (app: typeof h.t.app) =>
        app.inject({ method: 'GET', url: '/dashboard/operator/keeper', headers: { cookie } });
      assert.equal((await page(h.t.app)).statusCode, 200);
      const ended = await page(rotated.app);
      assert.equal(ended.statusCode, 303);
      assert.equal(
        ended.headers.location,
        '/dashboard/operator/sign-in?ended=token-changed&next=%2Fdashboard%2Foperator%2Fkeeper',
      );
      const { rows } = await h.t.database.db.query('SELECT 1 FROM console_sessions WHERE token_hash = $1', [
        createHash('sha256').update(token).digest(),
      ]);
      assert.deepEqual(rows, [], 'the session is gone');
      assert.equal((await page(h.t.app)).statusCode, 303, 'for every process');
    } finally {
      await rotated.close();
    }
  });

  test('the session’s MAC is keyed by the deployment’s encryption key: the admin token alone cannot compute it, and another ENCRYPTION_KEY ends the session', async () => {
    const rekeyed = await createTestApp({ peer: h.t, encryptionKey: randomBytes(32) });
    try {
      const cookie = await formSignIn(
        h.t.app,
        '/dashboard/operator/sign-in',
        { adminToken: ADMIN_TOKEN },
        'tr_operator',
      );
      const token = cookie.slice('tr_operator='.length);
      const tokenHash = createHash('sha256').update(token).digest();
      const { rows } = await h.t.database.db.query<{ admin_token_mac: Buffer }>(
        'SELECT admin_token_mac FROM console_sessions WHERE token_hash = $1',
        [tokenHash],
      );
      const stored = Buffer.from(rows[0]!.admin_token_mac);
      // What a reader of the database would test guesses of the admin token against, were it keyed by it.
      for (const guess of [
        createHmac('sha256', ADMIN_TOKEN).update(tokenHash).digest(),
        createHmac('sha256', ADMIN_TOKEN)
          .update(createHash('sha256').update(ADMIN_TOKEN).digest())
          .update(tokenHash)
          .digest(),
      ]) {
        assert.notDeepEqual(stored, guess);
      }
      const page = (app: typeof h.t.app) =>
        app.inject({ method: 'GET', url: '/dashboard/operator/keeper', headers: { cookie } });
      assert.equal((await page(h.t.app)).statusCode, 200);
      const ended = await page(rekeyed.app);
      assert.equal(ended.statusCode, 303);
      assert.equal(
        ended.headers.location,
        '/dashboard/operator/sign-in?ended=token-changed&next=%2Fdashboard%2Foperator%2Fkeeper',
      );
      assert.equal((await page(h.t.app)).statusCode, 303, 'the session is gone');
    } finally {
      await rekeyed.close();
    }
  });

  test('integrations with their keys: create one, issue a key shown once, sign in to the console with it; a live key on this chain is warned about', async () => {
    const existing = await h.t.newCaller('test');
    assert.equal((await existing.get('/api/v1/transfers')).statusCode, 200);
    const existingName = (await h.t.store.integrations.get(existing.integrationId))!.name;
    const { page } = await h.newPage();
    await signInAsOperator(page);
    const listed = `#integration-${existing.integrationId}`;
    assert.equal(await textOf(page, `${listed} td[data-label="Integration"] a`), existingName);
    assert.equal(
      await textOf(page, `${listed} #key-${existing.keyId}`),
      `mh_test_...${existing.key.slice(-4)} test active · created ${shown(h.t.clock.now())} · last used ${shown(h.t.clock.now())}`,
      'the key the test app just used, with its hint, mode, status and times',
    );
    assert.deepEqual(await unlabelledControls(page), []);

    // A name of blanks is refused by the service, whatever the browser lets through.
    await page.getByLabel('Name').fill('   ');
    await page.getByRole('button', { name: 'Create integration' }).click();
    assert.equal(await textOf(page, '#name-error'), 'Give the integration a name of 1 to 100 characters.');
    assert.equal(await page.getByLabel('Name').getAttribute('aria-invalid'), 'true');

    await page.getByLabel('Name').fill('Acme Wallet');
    await page.getByLabel('Name').press('Enter');
    await page.waitForURL(/\/dashboard\/operator\/integrations\/\d+\?done=created$/);
    const integrationId = Number(new URL(page.url()).pathname.split('/').pop());
    assert.equal(await textOf(page, 'h1'), 'Acme Wallet');
    assert.equal(await textOf(page, '#done'), 'Integration created. Issue it a key below.');
    assert.deepEqual(
      (await h.t.store.integrations.get(integrationId))?.name,
      'Acme Wallet',
      'through the store the admin API uses',
    );
    assert.deepEqual(await unlabelledControls(page), []);

    await page.getByLabel('Mode').selectOption('test');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await textOf(page, '#new-key');
    assert.match(key, /^mh_test_[0-9A-Za-z]{32}$/);
    assert.match(await textOf(page, '[role="alert"]'), /^This is the only time the key is shown/);
    assert.equal(await page.locator('#key-warning').count(), 0, 'a test key needs no warning');
    const [keyRow] = await h.t.store.integrations.listKeys(integrationId);
    assert.equal(keyRow?.hint, `mh_test_...${key.slice(-4)}`);
    // Shown once: the integration's page lists its hint, never the key again.
    await page.getByRole('link', { name: 'Done: back to Acme Wallet' }).click();
    assert.equal(await textOf(page, `#key-${keyRow!.id} th`), keyRow!.hint);
    assert.equal(await textOf(page, `#key-${keyRow!.id} .key-used`), 'never');
    assert.ok(!(await page.content()).includes(key));

    // The key opens the integrator's console of its integration.
    const integrator = await h.newPage();
    await signIn(integrator.page, key);
    assert.equal(await textOf(integrator.page, '.integration'), 'Acme Wallet');
    await page.reload();
    assert.equal(await textOf(page, `#key-${keyRow!.id} .key-used`), shown(h.t.clock.now()));

    await page.getByLabel('Mode').selectOption('live');
    await page.getByRole('button', { name: 'Create key' }).click();
    assert.match(await textOf(page, '#new-key'), /^mh_live_[0-9A-Za-z]{32}$/);
    assert.equal(await textOf(page, '#key-warning'), `Warning: ${LIVE_KEY_ON_LOCAL_CHAIN}.`);
    assert.ok(
      logs.some((line) => line.includes(LIVE_KEY_ON_LOCAL_CHAIN) && line.includes('"level":40')),
      'logged as the admin API logs it',
    );
    // Reloading the answer sends the form again: no other key is issued, and the page says why.
    const reloaded = await page.reload();
    assert.equal(reloaded?.request().method(), 'POST', 'the browser sent the form again');
    assert.equal(reloaded?.status(), 409);
    assert.equal(await textOf(page, 'h1'), 'The key was already shown');
    assert.equal(
      (await h.t.store.integrations.listKeys(integrationId)).length,
      2,
      'a test key and a live one: no third',
    );
    await page.getByRole('link', { name: 'Back to Acme Wallet' }).click();
    assert.equal(new URL(page.url()).pathname, `/dashboard/operator/integrations/${integrationId}`);

    const missing = await page.goto('/dashboard/operator/integrations/999999');
    assert.equal(missing?.status(), 404);
    assert.equal(await textOf(page, 'h1'), 'Integration not found');

    // At a phone's width nothing scrolls sideways.
    const phone = await h.newPage({ width: 375, height: 800 });
    await signInAsOperator(phone.page);
    assert.equal(await horizontalOverflow(phone.page), 0, 'the integrations fit 375 px');
    await phone.page.goto(`/dashboard/operator/integrations/${integrationId}`);
    assert.equal(await horizontalOverflow(phone.page), 0, 'an integration fits 375 px');
    await phone.page.getByRole('button', { name: 'Create key' }).click();
    assert.equal(await horizontalOverflow(phone.page), 0, 'a new key fits 375 px');
  });

  test('revoking a key by keyboard ends its console session; suspending an integration ends its sessions, resuming lets its keys in again', async () => {
    const caller = await h.t.newCaller('test');
    const hint = `mh_test_...${caller.key.slice(-4)}`;
    const integrator = await h.newPage();
    await signIn(integrator.page, caller.key);
    assert.equal((await sessionsOf(caller.keyId)).length, 1);

    const { page } = await h.newPage();
    await signInAsOperator(page);
    await page.goto(`/dashboard/operator/integrations/${caller.integrationId}`);
    // The disclosure opens with Enter, and its button is the next stop.
    await page.locator(`#key-${caller.keyId} summary`).focus();
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    assert.equal((await focused(page)).text, `Revoke key ${hint}`);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\?done=revoked&key=\d+$/);
    assert.equal(
      await textOf(page, '#done'),
      `Key ${hint} revoked: it is refused at once, and console sessions opened with it have ended.`,
    );
    assert.equal(await textOf(page, `#key-${caller.keyId} .key-status`), `revoked ${shown(h.t.clock.now())}`);
    assert.equal((await caller.get('/api/v1/transfers')).json().error.code, 'MH_002');

    await integrator.page.reload();
    assert.equal(new URL(integrator.page.url()).searchParams.get('ended'), 'revoked');
    assert.deepEqual(await sessionsOf(caller.keyId), []);

    // Another integration: suspended, then resumed.
    const other = await h.t.newCaller('test');
    await signIn(integrator.page, other.key);
    await page.goto(`/dashboard/operator/integrations/${other.integrationId}`);
    await page.getByText('Suspend this integration…').click();
    await page.getByRole('button', { name: 'Suspend integration' }).click();
    await page.waitForURL(/\?done=suspended$/);
    assert.equal(await textOf(page, '#integration-status'), 'suspended');
    assert.equal(
      await textOf(page, '#done'),
      'Integration suspended: every key of it is refused (MH_003) and its console sessions have ended.',
    );
    await integrator.page.reload();
    assert.equal(new URL(integrator.page.url()).searchParams.get('ended'), 'suspended');
    assert.equal((await other.get('/api/v1/transfers')).json().error.code, 'MH_003');

    await page.getByRole('button', { name: 'Resume integration' }).click();
    await page.waitForURL(/\?done=resumed$/);
    assert.equal(await textOf(page, '#integration-status'), 'active');
    assert.equal((await other.get('/api/v1/transfers')).statusCode, 200);
    await signIn(integrator.page, other.key);
    assert.equal(new URL(integrator.page.url()).pathname, '/dashboard/transfers');
  });

  test('the platform’s program, config and wallets, and what a fee wallet short of lamports breaks', async () => {
    const { t } = h;
    const { page } = await h.newPage();
    await signInAsOperator(page);
    await page.getByRole('link', { name: 'Platform' }).click();
    await page.waitForURL('**/dashboard/operator/platform');
    assert.equal(await textOf(page, '#platform-ready'), 'ready');
    for (const [role, wallet] of [
      ['admin', t.platform.admin.address],
      ['screeningAuthority', t.platform.screeningAuthority.address],
      ['feeWallet', t.platform.feeWallet],
    ] as const) {
      const lamports = await t.chain.chain.getBalance(wallet);
      assert.equal(await textOf(page, `#wallet-${role} code`), wallet);
      assert.equal(
        await textOf(page, `#wallet-${role} .balance`),
        `${rawToTokens(BigInt(lamports), 9)} SOL`,
        `${role}'s balance, read on chain`,
      );
      assert.equal(await textOf(page, `#wallet-${role} .shortfall`), 'none');
    }

    const lamports = BigInt(await t.chain.chain.getBalance(t.platform.feeWallet));
    try {
      await t.chain.cheats.setAccount(t.platform.feeWallet, { lamports: 1_000_000n });
      await page.reload();
      assert.equal(await textOf(page, '#platform-ready'), 'not ready');
      const { problems } = (
        await t.app.inject({ method: 'GET', url: '/admin/v1/platform', headers: ADMIN_HEADERS })
      ).json();
      assert.equal(problems.length, 1);
      assert.match(problems[0].message, /so reward claims fail .* routes do not depend on it/);
      assert.equal(
        await textOf(page, '#wallet-feeWallet .shortfall'),
        `short ${problems[0].message}`,
        'what the admin API says the shortfall breaks',
      );
      assert.equal(
        await textOf(page, '.problems li'),
        `wallet_unfunded (platform fee wallet): ${problems[0].message}`,
      );
      const phone = await h.newPage({ width: 375, height: 800 });
      await signInAsOperator(phone.page);
      await phone.page.goto('/dashboard/operator/platform');
      assert.equal(await horizontalOverflow(phone.page), 0, 'the platform fits 375 px');
    } finally {
      await t.chain.cheats.setAccount(t.platform.feeWallet, { lamports });
    }
  });

  test('the keeper’s health: a route in flight, due and waiting, then held; its hops’ lateness; a failed route with its last error; the workers alive', async () => {
    const { t } = h;
    const caller: Caller = await t.newCaller('test', UNLIMITED);
    const route = await quoteRoute(t, caller, { hops: 3, mint: address(SOL_MINT), arrivalSeconds: 180 });
    await deployRoute(t, caller, route);
    const row = await routeRow(t, route.id);
    const dueAt = (hop: number) => row.firstReleaseAt! + BigInt((hop - 1) * row.intervalSeconds!);
    /** Moves the service's clock, which the chain's follows, to `seconds` after hop `hop` fell due. */
    const moveTo = (hop: number, seconds: number) =>
      t.clock.advance(Number(dueAt(hop) + BigInt(seconds)) * 1000 - t.clock.now().getTime());

    const { page } = await h.newPage();
    await signInAsOperator(page);
    await page.getByRole('link', { name: 'Keeper' }).click();
    await page.waitForURL('**/dashboard/operator/keeper');
    assert.equal(await textOf(page, '#in-flight'), '1');
    assert.equal(await textOf(page, '#scheduled'), '1', 'its first hop is not due yet');
    assert.equal(await textOf(page, '#waiting'), '0');
    assert.equal(await textOf(page, '.due tbody'), 'No hop is overdue.');
    const { rows: workers } = await t.database.db.query<{ name: string }>(
      'SELECT name FROM worker_processes WHERE id = $1',
      [t.worker],
    );
    assert.equal(
      await textOf(page, '#workers-alive'),
      '1 alive. A process silent for 5 s counts as dead, and the routes it held are free for the others.',
    );
    assert.equal(await textOf(page, '.workers tbody th'), workers[0]!.name);

    // Due by the chain's clock, and no worker has it: the page, refreshing itself, says so.
    moveTo(1, 7);
    await waitForText(page, '#waiting', '1');
    assert.equal(await textOf(page, '#scheduled'), '0');
    const due = `#due-${route.id}`;
    assert.equal(await textOf(page, `${due} td[data-label="Hop"]`), '1 of 3');
    assert.equal(await textOf(page, `${due} td[data-label="Due"]`), shown(new Date(Number(dueAt(1)) * 1000)));
    assert.equal(await textOf(page, `${due} .held-by`), 'no live worker');

    // A worker claims it, as the keeper does: held by a live worker.
    const [claimed] = await t.store.hops.claimDue({
      chainNow: await chainNow(t),
      now: t.clock.now(),
      worker: t.worker,
      limit: 1,
    });
    assert.equal(claimed?.transfer.id, route.id);
    await page.reload();
    assert.equal(await textOf(page, '#held'), '1');
    assert.equal(await textOf(page, '#waiting'), '0');
    assert.equal(await textOf(page, `${due} .held-by`), workers[0]!.name);
    assert.equal(await textOf(page, '.workers td[data-label="Routes held"]'), '1');

    // Given back, then run by the keeper 7 s after its due time; the next 3 s after its own.
    await t.store.hops.release(route.id, claimed!.claim, {});
    assert.equal(await t.keeper.runOnce(), 1);
    moveTo(2, 3);
    assert.equal(await t.keeper.runOnce(), 1);
    await page.reload();
    assert.equal(await textOf(page, '#scheduled'), '1');
    assert.equal(await textOf(page, '.due tbody'), 'No hop is overdue.');
    // Lateness 7 s and 3 s: the median halfway, the 99th percentile 99% of the way (interpolated).
    const lateness = await page
      .locator('.lateness tbody tr')
      .evaluateAll((rows) => rows.map((tr) => [...tr.children].map((cell) => cell.textContent)));
    assert.deepEqual(lateness, [
      ['Last hour', '2', '5.0 s', `${(3 + 0.99 * 4).toFixed(1)} s`, '7.0 s'],
      ['Last 24 hours', '2', '5.0 s', `${(3 + 0.99 * 4).toFixed(1)} s`, '7.0 s'],
    ]);
    moveTo(3, 1);
    assert.equal(await t.keeper.runOnce(), 1, 'the route completes');
    await page.reload();
    assert.equal(await textOf(page, '#in-flight'), '0');

    // A route whose last hop fails for good.
    const usdc = await createMint(t.chain, { decimals: 6 });
    const failing = await quoteRoute(t, caller, { hops: 3, mint: usdc, arrivalSeconds: 180 });
    await deployRoute(t, caller, failing);
    await failLastHop(t, failing);
    const failed = await getTransfer(caller, failing.id);
    assert.equal(failed.status, 'failed');
    await page.reload();
    assert.equal(
      await textOf(page, '#failures-total'),
      '1 route failed or recoverable, waiting for their sources to rescue them.',
    );
    const failedRow = `#failed-${failing.id}`;
    assert.equal(await textOf(page, `${failedRow} td[data-label="Phase"]`), 'failed');
    assert.equal(await textOf(page, `${failedRow} td[data-label="Hops done"]`), '2 of 3');
    assert.equal(
      await textOf(page, `${failedRow} .last-error`),
      `MH_031 Route creation failed: ${failed.lastError.message} (${shown(new Date(failed.lastError.at))})`,
    );
    assert.equal(await page.locator('#keeper-live').getAttribute('hx-trigger'), 'every 5s');

    const phone = await h.newPage({ width: 375, height: 800 });
    await signInAsOperator(phone.page);
    await phone.page.goto('/dashboard/operator/keeper');
    assert.equal(await horizontalOverflow(phone.page), 0, 'the keeper fits 375 px');
  });
});
