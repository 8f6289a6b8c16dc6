// The console's forms whose answer shows a secret once (the operator's "issue a key", an endpoint's
// registration and secret rotation) act once per form however often it is sent, as a reload of the
// answer or a double click sends it: the repeat issues nothing and says the secret was already
// shown. A form's token is good only in the session and for the form it was made for; a form
// whose action failed may be sent again; the database keeps no secret, and forgets the tokens
// with the session.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN, type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { FORM_HEADERS, formSignIn } from './helpers.ts';

/** The one-time token of the page's form (each page tested has one such form). */
function formToken(html: string): string {
  const token = /<input type="hidden" name="formToken" value="([^"]+)">/.exec(html)?.[1];
  assert.ok(token, 'the form carries a one-time token');
  return token;
}

describe('forms that show a secret once', () => {
  let t: TestApp;
  let receiver: Receiver;
  before(async () => {
    t = await createTestApp({ config: { webhookPingTimeoutMs: 2_000 } });
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver?.close();
    await t?.close();
  });

  const signIn = (path: string, field: Record<string, string>, cookieName: string) =>
    formSignIn(t.app, path, field, cookieName);
  const operator = () => signIn('/dashboard/operator/sign-in', { adminToken: ADMIN_TOKEN }, 'tr_operator');
  const integrator = (caller: Caller) => signIn('/dashboard/sign-in', { apiKey: caller.key }, 'tr_console');
  const get = (url: string, cookie: string) => t.app.inject({ method: 'GET', url, headers: { cookie } });
  const post = (url: string, cookie: string, fields: Record<string, string>) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: { ...FORM_HEADERS, cookie },
      payload: new URLSearchParams(fields).toString(),
    });
  const formUses = async () =>
    (await t.database.db.query<{ nonce: Buffer }>('SELECT nonce FROM console_form_uses ORDER BY used_at'))
      .rows;

  test('the operator’s "issue a key" form issues one key: sent again, it issues none and says the key was shown once', async () => {
    const { id } = await t.createIntegration();
    const cookie = await operator();
    const page = `/dashboard/operator/integrations/${id}`;
    const token = formToken((await get(page, cookie)).body);
    const before = await formUses();

    const issued = await post(`${page}/keys`, cookie, { mode: 'test', formToken: token });
    assert.equal(issued.statusCode, 200);
    const key = /<code class="signature" id="new-key">(mh_test_[0-9A-Za-z]{32})<\/code>/.exec(
      issued.body,
    )?.[1];
    assert.ok(key, 'the key is shown');

    // A reload of the answer, or a second click that was quicker than the page.
    for (const mode of ['test', 'live']) {
      const again = await post(`${page}/keys`, cookie, { mode, formToken: token });
      assert.equal(again.statusCode, 409);
      assert.match(again.body, /<h1 id="error-title">The key was already shown<\/h1>/);
      assert.match(
        again.body,
        /This form already issued a key, shown once on the page that answered it\. It cannot be shown again, and no other key was issued\./,
      );
      assert.match(again.body, new RegExp(`<a href="${page}">Back to integration-`));
      assert.doesNotMatch(again.body, /mh_(test|live)_/);
    }
    assert.equal((await t.store.integrations.listKeys(id)).length, 1, 'one key, however often sent');

    // The database keeps the form's nonce, nothing of the key.
    const uses = (await formUses()).slice(before.length);
    assert.equal(uses.length, 1);
    assert.equal(uses[0]!.nonce.length, 16);
    assert.ok(!uses[0]!.nonce.includes(Buffer.from(key.slice(-8))));

    // The page made again carries a new token, which issues a new key.
    const next = await post(`${page}/keys`, cookie, {
      mode: 'test',
      formToken: formToken((await get(page, cookie)).body),
    });
    assert.equal(next.statusCode, 200);
    assert.equal((await t.store.integrations.listKeys(id)).length, 2);
  });

  test('a token is good only in its session and for its form; the tokens go with the session', async () => {
    const { id } = await t.createIntegration();
    const other = await t.createIntegration();
    const cookie = await operator();
    const page = `/dashboard/operator/integrations/${id}`;
    const token = formToken((await get(page, cookie)).body);

    const cases: [string, string, string][] = [
      ['another operator session', await operator(), `${page}/keys`],
      ['another integration’s form', cookie, `/dashboard/operator/integrations/${other.id}/keys`],
      ['no token', cookie, `${page}/keys`],
    ];
    for (const [name, session, url] of cases) {
      const refused = await post(url, session, {
        mode: 'test',
        ...(name === 'no token' ? {} : { formToken: token }),
      });
      assert.equal(refused.statusCode, 400, name);
      assert.match(refused.body, /<h1 id="error-title">This form is out of date<\/h1>/, name);
    }
    assert.equal((await t.store.integrations.listKeys(id)).length, 0);
    assert.equal((await t.store.integrations.listKeys(other.id)).length, 0);

    assert.equal((await post(`${page}/keys`, cookie, { mode: 'test', formToken: token })).statusCode, 200);
    const uses = (await formUses()).length;
    await post('/dashboard/operator/sign-out', cookie, {});
    assert.equal((await formUses()).length, uses - 1, 'signing out forgets the session’s tokens');
  });

  test('an endpoint’s register form registers one endpoint and its rotate form rotates once; a form whose action failed may be sent again', async () => {
    const caller = await t.newCaller('test');
    const cookie = await integrator(caller);
    const token = formToken((await get('/dashboard/webhooks', cookie)).body);
    const register = (url: string) =>
      post('/dashboard/webhooks', cookie, { url, scope: 'all', formToken: token });

    // Nothing answers at this URL: nothing registered, and the same form may be sent again.
    const unreachable = await register('http://127.0.0.1:1/hooks');
    assert.equal(unreachable.statusCode, 400);
    assert.match(unreachable.body, /Webhook URL unreachable/);

    const registered = await register(receiver.url);
    assert.equal(registered.statusCode, 200);
    assert.match(registered.body, /<code id="signing-secret">whsec_/);
    const again = await register(receiver.url);
    assert.equal(again.statusCode, 409);
    assert.match(again.body, /<h1 id="error-title">The signing secret was already shown<\/h1>/);
    assert.match(again.body, /<a href="\/dashboard\/webhooks">Back to webhooks<\/a>/);
    assert.doesNotMatch(again.body, /whsec_/);
    const endpoints = (await caller.get('/api/v1/webhooks')).json().items as { id: number }[];
    assert.equal(endpoints.length, 1, 'one endpoint, however often sent');
    assert.equal(receiver.received.length, 1, 'one ping');

    const endpoint = `/dashboard/webhooks/${endpoints[0]!.id}`;
    const sealed = async () =>
      (
        await t.database.db.query<{ secret_sealed: string }>(
          'SELECT secret_sealed FROM webhook_endpoints WHERE id = $1',
          [endpoints[0]!.id],
        )
      ).rows[0]!.secret_sealed;
    const rotateToken = formToken((await get(endpoint, cookie)).body);
    const rotate = () =>
      post(`${endpoint}/rotate-secret`, cookie, { overlapSeconds: '3600', formToken: rotateToken });
    const rotated = await rotate();
    assert.equal(rotated.statusCode, 200);
    assert.match(rotated.body, /<h2 id="secret-title">New signing secret<\/h2>/);
    const afterRotation = await sealed();
    const repeated = await rotate();
    assert.equal(repeated.statusCode, 409);
    assert.match(repeated.body, /<h1 id="error-title">The new secret was already shown<\/h1>/);
    assert.match(repeated.body, new RegExp(`<a href="${endpoint}">Back to webhook endpoint \\d+</a>`));
    assert.equal(await sealed(), afterRotation, 'the secret was not rotated again');
  });
});
