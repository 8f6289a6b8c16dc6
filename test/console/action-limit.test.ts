// A signed-in console page's actions (its form posts) are limited per API key, and for the
// operator, a minute: past the limit the console answers a page saying how long to wait and does
// nothing; reading pages and their live refresh never count, and another key has its own limit.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/app.ts';
import { FORM_HEADERS, formSignIn } from './helpers.ts';

const LIMITED = /Too many actions: the console takes 3 a minute\. Nothing was done; try again in \d+ s\./;

describe('console actions', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ config: { consoleActionsPerMinute: 3 } });
  });
  after(() => t?.close());

  const signIn = (path: string, field: Record<string, string>, cookieName: string) =>
    formSignIn(t.app, path, field, cookieName);
  const post = (url: string, cookie: string, payload = '') =>
    t.app.inject({ method: 'POST', url, headers: { ...FORM_HEADERS, cookie }, payload });
  const get = (url: string, cookie: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url, headers: { cookie, ...headers } });

  test('are limited per API key: past the limit a page says how long to wait; reading is not limited; another key has its own', async () => {
    const caller = await t.newCaller('test');
    const cookie = await signIn('/dashboard/sign-in', { apiKey: caller.key }, 'tr_console');
    // Whatever an action's outcome (here: no such endpoint), it counts.
    for (let action = 0; action < 3; action++) {
      assert.equal(
        (await post('/dashboard/webhooks/999999/test', cookie)).statusCode,
        404,
        `action ${action + 1}`,
      );
    }
    const limited = await post('/dashboard/webhooks', cookie, 'url=http%3A%2F%2F127.0.0.1%3A1%2F&scope=all');
    assert.equal(limited.statusCode, 429);
    assert.match(limited.headers['content-type'] ?? '', /text\/html/);
    assert.match(limited.body, /<h1 id="error-title">Wait a moment<\/h1>/);
    assert.match(String(limited.headers['retry-after']), /^\d+$/);
    assert.match(limited.body, LIMITED);
    assert.match(limited.body, /<nav aria-label="Console">/, 'in the signed-in console');

    // Another session of the same key shares its limit: signing in again does not reset it.
    const second = await signIn('/dashboard/sign-in', { apiKey: caller.key }, 'tr_console');
    assert.equal((await post('/dashboard/webhooks/999999/enable', second)).statusCode, 429);
    // Pages, and a page refreshing itself, are read as ever.
    assert.equal((await get('/dashboard/webhooks', cookie)).statusCode, 200);
    assert.equal((await get('/dashboard/transfers', cookie, { 'hx-request': 'true' })).statusCode, 200);
    // Another integration's key acts.
    const other = await t.newCaller('test');
    const otherCookie = await signIn('/dashboard/sign-in', { apiKey: other.key }, 'tr_console');
    assert.equal((await post('/dashboard/webhooks/999999/test', otherCookie)).statusCode, 404);
  });

  test('are limited for the operator: past the limit nothing is done, and the operator’s page says how long to wait', async () => {
    const cookie = await signIn('/dashboard/operator/sign-in', { adminToken: ADMIN_TOKEN }, 'tr_operator');
    for (let action = 0; action < 3; action++) {
      assert.equal((await post('/dashboard/operator/keys/999999/revoke', cookie)).statusCode, 404);
    }
    const integrations = (await t.store.integrations.list()).length;
    const limited = await post('/dashboard/operator/integrations', cookie, 'name=Too+many');
    assert.equal(limited.statusCode, 429);
    assert.match(limited.body, LIMITED);
    assert.match(limited.body, /<nav aria-label="Operator">/, 'in the signed-in operator’s console');
    assert.equal((await t.store.integrations.list()).length, integrations, 'no integration created');
    assert.equal((await get('/dashboard/operator/integrations', cookie)).statusCode, 200);
  });
});
