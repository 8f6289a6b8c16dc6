// Console sessions over HTTP, on the test clock: one ends two hours after its last use and twelve
// after it was opened however much it is used; a refreshing part of a page is sent to sign in by
// htmx's redirect header, and answered 204 while it shows what it showed; and the console's form
// parsing and cookies stay out of the API.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Caller, createTestApp, createTransfer, type TestApp } from '../helpers/app.ts';

const HOUR = 3600_000;
const ORIGIN = 'http://console.test';

describe('console sessions', () => {
  let t: TestApp;
  let caller: Caller;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test');
  });
  after(() => t.close());

  /** Signs in through the form; answers the session cookie. */
  async function signIn(): Promise<string> {
    const response = await t.app.inject({
      method: 'POST',
      url: '/dashboard/sign-in',
      headers: { host: 'console.test', origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ apiKey: caller.key }).toString(),
    });
    assert.equal(response.statusCode, 303, response.body);
    assert.equal(response.headers.location, '/dashboard/transfers');
    const cookie = response.cookies.find((entry) => entry.name === 'tr_console');
    assert.ok(cookie);
    return `tr_console=${cookie.value}`;
  }
  const list = (cookie: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url: '/dashboard/transfers', headers: { cookie, ...headers } });

  test('a session ends two hours after its last use', async () => {
    const cookie = await signIn();
    t.clock.advance(1.5 * HOUR);
    assert.equal((await list(cookie)).statusCode, 200);
    t.clock.advance(1.5 * HOUR);
    assert.equal((await list(cookie)).statusCode, 200, 'its use moved its end on');
    t.clock.advance(2 * HOUR);
    const ended = await list(cookie);
    assert.equal(ended.statusCode, 303);
    assert.equal(ended.headers.location, '/dashboard/sign-in?ended=expired&next=%2Fdashboard%2Ftransfers');
    assert.equal(
      ended.cookies.find((entry) => entry.name === 'tr_console')?.value,
      '',
      'the cookie is cleared',
    );
  });

  test('a session ends twelve hours after it was opened, however much it is used', async () => {
    const cookie = await signIn();
    for (let hours = 1.5; hours < 12; hours += 1.5) {
      t.clock.advance(1.5 * HOUR);
      assert.equal((await list(cookie)).statusCode, 200, `after ${hours} h`);
    }
    t.clock.advance(1.5 * HOUR);
    assert.equal((await list(cookie)).statusCode, 303);
  });

  test('a page refreshing itself keeps no session alive: an unattended tab’s session lapses', async () => {
    const cookie = await signIn();
    const refresh = () =>
      t.app.inject({
        method: 'GET',
        url: '/dashboard/transfers',
        headers: { cookie, 'hx-request': 'true' },
      });
    for (let minutes = 30; minutes < 120; minutes += 30) {
      t.clock.advance(HOUR / 2);
      assert.equal((await refresh()).statusCode, 200, `refreshed after ${minutes} min`);
    }
    t.clock.advance(HOUR / 2);
    const lapsed = await refresh();
    assert.equal(lapsed.statusCode, 200);
    assert.equal(
      lapsed.headers['hx-redirect'],
      '/dashboard/sign-in?ended=expired&next=%2Fdashboard%2Ftransfers',
    );
  });

  test('a page part refreshing by itself is sent to sign in by htmx’s redirect header', async () => {
    const response = await list('tr_console=unknown', { 'hx-request': 'true' });
    assert.equal(response.statusCode, 200);
    assert.equal(
      response.headers['hx-redirect'],
      '/dashboard/sign-in?ended=expired&next=%2Fdashboard%2Ftransfers',
    );
    assert.equal(response.body, '');
  });

  test('a live part unchanged since its last look is answered 204 (nothing to swap), a changed one anew', async () => {
    const cookie = await signIn();
    await createTransfer(caller, 'live-part-1');
    const page = await list(cookie);
    const refresh = /<tbody id="transfer-rows" hx-get="([^"]+)" hx-trigger="every 2s"/.exec(page.body)?.[1];
    assert.ok(refresh, 'a quote is live, so its rows refresh');
    const again = () =>
      t.app.inject({
        method: 'GET',
        url: refresh.replaceAll('&amp;', '&'),
        headers: { cookie, 'hx-request': 'true' },
      });
    const unchanged = await again();
    assert.equal(unchanged.statusCode, 204);
    assert.equal(unchanged.body, '');

    await createTransfer(caller, 'live-part-2');
    const changed = await again();
    assert.equal(changed.statusCode, 200);
    assert.match(changed.body, /^<tbody id="transfer-rows"/, 'the rows alone');
    assert.equal(changed.body.match(/<tr>/g)?.length, 2);
  });

  test('the API is untouched: no form bodies, no console cookies, its own error envelope', async () => {
    const form = await t.app.inject({
      method: 'POST',
      url: '/api/v1/transfers/estimate',
      headers: { ...caller.headers, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'tokenMint=So11111111111111111111111111111111111111112&amountRaw=1000',
    });
    assert.equal(form.statusCode, 415);
    assert.equal(form.json().error.code, 'MH_016');
    const cookie = await signIn();
    const api = await t.app.inject({ method: 'GET', url: '/api/v1/transfers', headers: { cookie } });
    assert.equal(api.statusCode, 401, 'a console session is no API credential');
    assert.equal(api.json().error.code, 'MH_001');
  });
});

describe('console sessions in production', () => {
  test('the session cookie is Secure, HttpOnly, SameSite=Strict and the console’s alone, though the request came as HTTP from a TLS front', async () => {
    const t = await createTestApp({ config: { secureCookies: true } });
    try {
      const caller = await t.newCaller('test');
      const response = await t.app.inject({
        method: 'POST',
        url: '/dashboard/sign-in',
        headers: {
          host: 'console.test',
          origin: ORIGIN,
          'content-type': 'application/x-www-form-urlencoded',
        },
        payload: new URLSearchParams({ apiKey: caller.key }).toString(),
      });
      assert.equal(response.statusCode, 303, response.body);
      const cookie = response.cookies.find((entry) => entry.name === 'tr_console');
      assert.deepEqual(
        {
          secure: cookie?.secure,
          httpOnly: cookie?.httpOnly,
          sameSite: cookie?.sameSite,
          path: cookie?.path,
        },
        { secure: true, httpOnly: true, sameSite: 'Strict', path: '/dashboard' },
      );
    } finally {
      await t.close();
    }
  });
});

describe('console sign-ins', () => {
  test('are limited per address: past the limit a minute, the sign-in page says to wait, and no key is checked', async () => {
    const t = await createTestApp({ config: { consoleSignInsPerMinute: 3 } });
    try {
      const caller = await t.newCaller('test');
      const signIn = (apiKey: string, remoteAddress = '203.0.113.7') =>
        t.app.inject({
          method: 'POST',
          url: '/dashboard/sign-in',
          remoteAddress,
          headers: {
            host: 'console.test',
            origin: ORIGIN,
            'content-type': 'application/x-www-form-urlencoded',
          },
          payload: new URLSearchParams({ apiKey }).toString(),
        });
      for (let attempt = 0; attempt < 3; attempt++) {
        assert.equal((await signIn(`tr_test_${'x'.repeat(32)}`)).statusCode, 401, `guess ${attempt + 1}`);
      }
      const limited = await signIn(caller.key);
      assert.equal(limited.statusCode, 429);
      assert.match(limited.headers['content-type'] ?? '', /text\/html/);
      assert.match(limited.body, /Too many sign-in attempts from this address\. Try again in \d+ s\./);
      assert.equal(limited.cookies.length, 0, 'even the right key opens no session');
      assert.equal((await signIn(caller.key, '203.0.113.8')).statusCode, 303, 'another address signs in');
    } finally {
      await t.close();
    }
  });
});
