// Whatever a browser (or someone posing as one) sends the console, it answers a page: 400 for a
// form it cannot take, 404 for what is not the caller's, the list or page as it stands for a query
// it ignores; never a 5xx.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.ts';

const FORM = {
  host: 'console.test',
  origin: 'http://console.test',
  'content-type': 'application/x-www-form-urlencoded',
};

describe('the console with input it does not expect', () => {
  let t: TestApp;
  let cookie: string;
  before(async () => {
    t = await createTestApp();
    const caller = await t.newCaller('test');
    const signedIn = await t.app.inject({
      method: 'POST',
      url: '/dashboard/sign-in',
      headers: FORM,
      payload: new URLSearchParams({ apiKey: caller.key }).toString(),
    });
    cookie = `tr_console=${signedIn.cookies.find((entry) => entry.name === 'tr_console')!.value}`;
  });
  after(() => t.close());

  test('queries and paths: ignored, refused with 400, or not found, never a 5xx', async () => {
    const cases: [string, number][] = [
      ['/dashboard/transfers?cursor=%00%ff', 200],
      [`/dashboard/transfers?cursor=${Buffer.from('a999999999999999.1').toString('base64url')}`, 200],
      ['/dashboard/transfers?status=nope&fromDate=2026-13-45', 400],
      [`/dashboard/transfers?externalId=${'x'.repeat(500)}`, 400],
      ['/dashboard/transfers/999999999999999', 404],
      ['/dashboard/transfers/9999999999999999', 404],
      ['/dashboard/transfers/abc', 404],
      ['/dashboard/usage?days=1e400', 200],
      ['/dashboard/webhooks/0', 404],
      ['/dashboard/earnings?claim=99999999999999999&page=-1', 200],
    ];
    for (const [url, status] of cases) {
      const answer = await t.app.inject({ method: 'GET', url, headers: { cookie } });
      assert.equal(answer.statusCode, status, `${url}: ${answer.body.slice(0, 200)}`);
      assert.match(answer.headers['content-type'] ?? '', /text\/html/);
    }
  });

  test('forms: a URL that is no web address, an event id no event can have, a foreign endpoint, an unknown overlap, a stale claim form, a one-time token not made for the form', async () => {
    const list = await t.app.inject({ method: 'GET', url: '/dashboard/webhooks', headers: { cookie } });
    const token = encodeURIComponent(/name="formToken" value="([^"]+)"/.exec(list.body)![1]!);
    const cases: [string, string, number][] = [
      ['/dashboard/webhooks', `url=javascript:alert(1)&formToken=${token}`, 400],
      ['/dashboard/webhooks', 'url=https%3A%2F%2Fexample.com%2F&formToken=%00.%ff', 400],
      ['/dashboard/webhooks/1/resend', 'eventId=%00', 404],
      ['/dashboard/webhooks/1/rotate-secret', 'overlapSeconds=-5', 404],
      ['/dashboard/earnings/claim', 'requestKey=x', 400],
    ];
    for (const [url, payload, status] of cases) {
      const answer = await t.app.inject({ method: 'POST', url, headers: { ...FORM, cookie }, payload });
      assert.equal(answer.statusCode, status, `${url}: ${answer.body.slice(0, 200)}`);
    }
  });
});
