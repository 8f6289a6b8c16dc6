// Signing in to the console with an API key, in real Chromium: by keyboard alone, a session
// cookie the page's scripts cannot read and other sites cannot send, the key in no URL, page or
// cookie or log line; a wrong, revoked or suspended key told so in words; sign-out; forms posted from
// another site refused.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { ADMIN_HEADERS, type Caller, createTransfer } from '../helpers/app.ts';
import { browserUnavailable } from '../helpers/browser.ts';
import {
  type ConsoleHarness,
  focused,
  scriptCookies,
  signIn,
  startConsole,
  textOf,
  unlabelledControls,
} from './helpers.ts';

describe('signing in to the console', { skip: browserUnavailable() }, () => {
  let h: ConsoleHarness;
  /** The app's log lines, every request's included. */
  const logs: string[] = [];
  before(async () => {
    h = await startConsole({ logger: pino({ level: 'info' }, { write: (line: string) => logs.push(line) }) });
  });
  after(() => h?.close());

  const sessionsOf = async (keyId: number) =>
    (
      await h.t.database.db.query<{ token_hash: Buffer }>(
        'SELECT token_hash FROM console_sessions WHERE api_key_id = $1',
        [keyId],
      )
    ).rows;
  const admin = (url: string) =>
    h.t.app.inject({ method: 'POST', url, headers: ADMIN_HEADERS }).then((response) => {
      assert.equal(response.statusCode, 200, response.body);
    });

  test('by keyboard: Tab to the labelled key field, type, Enter; the key shows nowhere but a session cookie does', async () => {
    const caller = await h.t.newCaller('test');
    const { context, page } = await h.newPage();
    const urls: string[] = [];
    page.on('request', (request) => urls.push(request.url()));

    await page.goto('/dashboard');
    assert.equal(new URL(page.url()).pathname, '/dashboard/sign-in');
    assert.deepEqual(await unlabelledControls(page), []);
    for (let presses = 0; presses < 5 && (await focused(page)).id !== 'apiKey'; presses++) {
      await page.keyboard.press('Tab');
    }
    assert.equal((await focused(page)).id, 'apiKey', 'Tab reaches the key field');
    await page.keyboard.type(caller.key);
    await page.keyboard.press('Enter');
    await page.waitForURL('**/dashboard/transfers');

    const integration = await h.t.store.integrations.get(caller.integrationId);
    assert.equal(await textOf(page, '.integration'), integration!.name);
    assert.equal(await textOf(page, '.badge.mode-test'), 'Test mode');
    assert.match(await textOf(page, '.mode-banner'), /^Test mode: you are viewing test data/);
    assert.deepEqual(await unlabelledControls(page), []);

    assert.ok(!urls.some((url) => url.includes(caller.key)), 'the key is in no URL');
    assert.ok(
      logs.some((line) => line.includes('"route":"/dashboard/sign-in"')),
      'the sign-in was logged',
    );
    assert.ok(!logs.some((line) => line.includes(caller.key)), 'the key is in no log line');
    assert.ok(!(await page.content()).includes(caller.key), 'the key is in no page');
    const cookies = await context.cookies();
    assert.deepEqual(
      cookies.map(({ name, path, httpOnly, sameSite, secure }) => ({
        name,
        path,
        httpOnly,
        sameSite,
        secure,
      })),
      [{ name: 'tr_console', path: '/dashboard', httpOnly: true, sameSite: 'Strict', secure: false }],
    );
    assert.ok(!cookies[0]!.value.includes(caller.key));
    assert.equal(await scriptCookies(page), '', 'scripts cannot read the session');
    // The database keeps the token's hash only, with the key's id.
    assert.deepEqual(
      (await sessionsOf(caller.keyId)).map((row) => Buffer.from(row.token_hash).toString('hex')),
      [createHash('sha256').update(cookies[0]!.value).digest('hex')],
    );
  });

  test('a wrong key is told so in words, on the sign-in page, and opens no session', async () => {
    const { context, page } = await h.newPage();
    for (const wrong of [`mh_test_${'x'.repeat(32)}`, 'not-a-key']) {
      await page.goto('/dashboard/sign-in');
      await page.getByLabel('API key').fill(wrong);
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.getByRole('button', { name: 'Sign in' }).click(),
      ]);
      assert.equal(response.status(), 401);
      assert.equal(
        await textOf(page, '[role="alert"]'),
        'Invalid API key. Check that the key is complete and belongs to this environment.',
      );
      assert.equal(await page.getByLabel('API key').getAttribute('aria-invalid'), 'true');
      assert.equal(await page.getByLabel('API key').inputValue(), '', 'the key is not sent back');
    }
    assert.deepEqual(await context.cookies(), []);
  });

  test('a key revoked during a session ends it, even on a page refreshing by itself; the key is then refused', async () => {
    const caller = await h.t.newCaller('test');
    const transfer = await createTransfer(caller);
    const { context, page } = await h.newPage();
    await signIn(page, caller.key);
    // A quote's page refreshes itself every 2 s.
    await page.goto(`/dashboard/transfers/${transfer.id}`);
    assert.equal(await page.locator('#transfer-live').getAttribute('hx-trigger'), 'every 2s');

    await admin(`/admin/v1/keys/${caller.keyId}/revoke`);
    await page.waitForURL('**/dashboard/sign-in?**');
    assert.equal(new URL(page.url()).searchParams.get('ended'), 'revoked');
    assert.equal(
      await textOf(page, '.notice'),
      'The API key this session was opened with has been revoked, so the session ended. Sign in with an active key.',
    );
    assert.deepEqual(await sessionsOf(caller.keyId), []);
    assert.deepEqual(await context.cookies(), []);

    await page.getByLabel('API key').fill(caller.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    assert.equal(await textOf(page, '[role="alert"]'), 'This API key has been revoked. Use an active key.');
  });

  test('suspending the integration ends its sessions with a message saying so', async () => {
    const caller = await h.t.newCaller('test');
    const { page } = await h.newPage();
    await signIn(page, caller.key);
    await admin(`/admin/v1/integrations/${caller.integrationId}/suspend`);
    await page.reload();
    assert.equal(new URL(page.url()).searchParams.get('ended'), 'suspended');
    assert.equal(
      await textOf(page, '.notice'),
      'This integration is suspended, so the session ended. Contact support to restore access.',
    );
    assert.deepEqual(await sessionsOf(caller.keyId), []);
  });

  test('signing out ends the session; its pages then ask to sign in and come back after', async () => {
    const caller = await h.t.newCaller('test');
    const transfer = await createTransfer(caller);
    const { page } = await h.newPage();
    await signIn(page, caller.key);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/dashboard/sign-in?ended=signed-out');
    assert.equal(await textOf(page, '.notice'), 'You are signed out.');
    assert.deepEqual(await sessionsOf(caller.keyId), []);

    await page.goto(`/dashboard/transfers/${transfer.id}`);
    assert.equal(new URL(page.url()).pathname, '/dashboard/sign-in');
    await page.getByLabel('API key').fill(caller.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`**/dashboard/transfers/${transfer.id}`);
    assert.equal(await textOf(page, 'h1'), `Transfer ${transfer.id}`);
  });

  test('forms posted from another site are refused: no sign-in, no sign-out', async () => {
    const caller: Caller = await h.t.newCaller('test');
    const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
    const post = (url: string, headers: Record<string, string>, body = '') =>
      fetch(`${h.origin}${url}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body,
      });

    const foreign = await post(
      '/dashboard/sign-in',
      { origin: 'https://elsewhere.example' },
      form({ apiKey: caller.key }),
    );
    assert.equal(foreign.status, 403);
    assert.equal(foreign.headers.get('set-cookie'), null);
    assert.match(await foreign.text(), /sent from another site/);
    const unnamed = await post('/dashboard/sign-in', {}, form({ apiKey: caller.key }));
    assert.equal(unnamed.status, 403, 'a POST naming no origin at all is refused too');

    const own = await post('/dashboard/sign-in', { origin: h.origin }, form({ apiKey: caller.key }));
    assert.equal(own.status, 303);
    const cookie = own.headers.get('set-cookie')!.split(';')[0]!;
    const signOut = await post('/dashboard/sign-out', { origin: 'https://elsewhere.example', cookie });
    assert.equal(signOut.status, 403);
    assert.equal((await sessionsOf(caller.keyId)).length, 1, 'the session is still open');
  });
});
