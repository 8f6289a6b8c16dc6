// The console's webhooks, in real Chromium against the real app and a real receiver: registering
// an endpoint by keyboard (its secret shown once, a reload of it registering nothing more, and the
// ping it got verifies with it), the delivery log with each attempt's answer and the next attempt,
// a resend that reaches the receiver again, a secret rotation (a reload rotating nothing more) and
// a test send signed with both secrets, a disabled endpoint enabled, an endpoint deleted,
// integrations and modes apart, and a phone's width.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { verifyWebhook } from '../../clients/typescript/src/webhooks.ts';
import { nominalSchedule } from '../../src/domain/webhook-retry.ts';
import { createTransfer } from '../helpers/app.ts';
import { browserUnavailable } from '../helpers/browser.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { UNLIMITED } from '../recovery/helpers.ts';
import { registerEndpoint, workerFor } from '../webhooks/helpers.ts';
import {
  type ConsoleHarness,
  focused,
  horizontalOverflow,
  signIn,
  startConsole,
  textOf,
  unlabelledControls,
} from './helpers.ts';

/** A time as the console shows every time: `2026-06-01 12:00:05 UTC`. */
const shown = (at: string | Date) => `${new Date(at).toISOString().slice(0, 19).replace('T', ' ')} UTC`;

/** The requests the receiver got for one event. */
const deliveriesOf = (receiver: Receiver, eventId: string) =>
  receiver.received.filter((request) => request.headers['mh-event-id'] === eventId);

/** The attempt rows of an event's delivery on the page: [attempt, result, answer]. */
const attemptRows = (page: Page, eventId: string) =>
  page
    .locator(`[id="delivery-${eventId}"] tbody tr`)
    .evaluateAll((rows) =>
      rows.map((row) =>
        [...row.querySelectorAll('th, td')]
          .filter((_, index) => index !== 1 && index !== 3)
          .map((cell) => cell.textContent?.replace(/\s+/g, ' ').trim()),
      ),
    );

describe('webhooks in the console', { skip: browserUnavailable() }, () => {
  let h: ConsoleHarness;
  let receiver: Receiver;
  before(async () => {
    h = await startConsole({ config: { webhookPingTimeoutMs: 2_000 } });
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver?.close();
    await h?.close();
  });

  test('an endpoint registered by keyboard with chosen event types; its secret is shown once and signed the ping it got', async () => {
    const caller = await h.t.newCaller('test', UNLIMITED);
    const { page } = await h.newPage();
    await signIn(page, caller.key);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.waitForURL('**/dashboard/webhooks');
    assert.equal(await textOf(page, '#endpoint-rows'), 'No webhook endpoints yet. Register one below.');
    assert.deepEqual(await unlabelledControls(page), []);

    // Keyboard only: the URL, the arrow key to "only these", Space on two types, Tab to the button.
    await page.getByLabel('URL').focus();
    await page.keyboard.type(receiver.url);
    await page.keyboard.press('Tab');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space');
    for (let presses = 0; presses < 4; presses++) await page.keyboard.press('Tab');
    await page.keyboard.press('Space');
    for (let presses = 0; presses < 20 && (await focused(page)).text !== 'Register endpoint'; presses++) {
      await page.keyboard.press('Tab');
    }
    await page.keyboard.press('Enter');
    await page.locator('#signing-secret').waitFor();

    const [listed] = (await caller.get('/api/v1/webhooks')).json().items;
    assert.deepEqual(listed.events, ['transfer.quote_created', 'transfer.completed']);
    assert.equal(listed.secret, null, 'the API never shows it again');
    assert.equal(await textOf(page, 'h1'), `Webhook endpoint ${listed.id}`);
    assert.equal(await textOf(page, '#endpoint-events'), 'transfer.quote_created, transfer.completed');
    const secret = await textOf(page, '#signing-secret');
    assert.match(secret, /^whsec_/);
    const ping = receiver.received.at(-1)!;
    assert.equal(
      verifyWebhook(ping.body, ping.headers['mh-signature'], secret, { now: h.t.clock.now() }).type,
      'ping',
    );
    assert.deepEqual(await unlabelledControls(page), []);

    // Reloading the answer sends the form again: nothing more is registered, and the page says why.
    assert.equal((await page.reload())?.status(), 409);
    assert.equal(await textOf(page, 'h1'), 'The signing secret was already shown');
    assert.equal((await caller.get('/api/v1/webhooks')).json().items.length, 1);
    assert.equal((await page.content()).includes(secret), false);

    // Shown once: the endpoint's page does not show it again, nor does the list.
    await page.goto(`/dashboard/webhooks/${listed.id}`);
    assert.equal(await page.locator('#signing-secret').count(), 0);
    await page.goto('/dashboard/webhooks');
    assert.equal(
      await textOf(page, '#endpoint-rows td[data-label="Events"]'),
      'transfer.quote_created, transfer.completed',
    );
    assert.equal((await page.content()).includes(secret), false);
  });

  test('a URL that does not answer is refused with the API’s reason, and the form keeps what was typed', async () => {
    const caller = await h.t.newCaller('test', UNLIMITED);
    const down = await startReceiver();
    const url = down.url;
    await down.close();
    const { page } = await h.newPage();
    await signIn(page, caller.key);
    await page.goto('/dashboard/webhooks');
    await page.getByLabel('URL').fill(url);
    await page.getByRole('button', { name: 'Register endpoint' }).click();
    await page.locator('#register-error').waitFor();
    assert.match(await textOf(page, '#register-error'), /^Webhook URL unreachable: .*ECONNREFUSED/);
    assert.equal(await page.getByLabel('URL').inputValue(), url);
    assert.equal(await page.getByLabel('URL').getAttribute('aria-invalid'), 'true');
    assert.deepEqual((await caller.get('/api/v1/webhooks')).json().items, []);
  });

  test('the delivery log shows each attempt’s answer and the next attempt, refreshes itself, and a resend reaches the receiver again', async () => {
    const caller = await h.t.newCaller('test', UNLIMITED);
    const endpoint = await registerEndpoint(caller, receiver.url);
    const worker = workerFor(h.t);
    try {
      receiver.respondWith({ status: 503, body: '{"error":"busy, try later"}' });
      const transfer = await createTransfer(caller);
      assert.equal(await worker.runOnce(), 1);
      const [event] = (await caller.get(`/api/v1/events?transferId=${transfer.id}`)).json().items;
      const [delivery] = event.deliveries;

      const { page } = await h.newPage();
      await signIn(page, caller.key);
      await page.goto(`/dashboard/webhooks/${endpoint.id}`);
      const card = `[id="delivery-${event.id}"]`;
      assert.equal(await textOf(page, `${card} .delivery-status`), 'pending');
      assert.match(
        await textOf(page, `${card} .delivery-next`),
        new RegExp(`^next attempt ${shown(delivery.nextAttemptAt)}`),
      );
      assert.deepEqual(await attemptRows(page, event.id), [['1', 'HTTP 503', '{"error":"busy, try later"}']]);
      assert.equal(await textOf(page, `${card} h3`), `transfer.quote_created of transfer ${transfer.id}`);

      // The retry: the page, left open, shows it delivered without a reload.
      receiver.respondWith({ status: 200, body: 'thanks' });
      h.t.clock.set(new Date(delivery.nextAttemptAt));
      assert.equal(await worker.runOnce(), 1);
      await page.locator(`${card} .delivery-status`, { hasText: 'delivered' }).waitFor({ timeout: 10_000 });
      assert.deepEqual(await attemptRows(page, event.id), [
        ['2', 'HTTP 200', 'thanks'],
        ['1', 'HTTP 503', '{"error":"busy, try later"}'],
      ]);
      assert.equal(
        await page.locator('#webhook-deliveries').getAttribute('hx-trigger'),
        null,
        'refreshing stops',
      );
      assert.equal(deliveriesOf(receiver, event.id).length, 2);

      // Resend: the receiver gets the same event once more.
      await page
        .locator(card)
        .getByRole('button', { name: /^Resend/ })
        .click();
      await page.waitForURL(`**/dashboard/webhooks/${endpoint.id}?done=resent`);
      assert.equal(
        await textOf(page, '[role="status"].notice'),
        'The event is queued for delivery again; its attempts show below as they are made.',
      );
      assert.equal(await textOf(page, `${card} .delivery-status`), 'pending');
      assert.equal(await worker.runOnce(), 1);
      const received = deliveriesOf(receiver, event.id);
      assert.equal(received.length, 3);
      assert.equal(received[2]!.body, received[0]!.body, 'the same event, byte for byte');
      await page.reload();
      assert.equal(await textOf(page, `${card} .delivery-status`), 'delivered');
      assert.equal(await textOf(page, `${card} .delivery-round`), '1 attempt since resent');
      assert.deepEqual(await attemptRows(page, event.id), [
        ['1 (resend)', 'HTTP 200', 'thanks'],
        ['2', 'HTTP 200', 'thanks'],
        ['1', 'HTTP 503', '{"error":"busy, try later"}'],
      ]);
      // The same log as the API's.
      const log = (await caller.get(`/api/v1/webhooks/${endpoint.id}/deliveries?eventId=${event.id}`)).json();
      assert.deepEqual(
        log.items.map((item: { responseStatus: number; responseBody: string }) => [
          `HTTP ${item.responseStatus}`,
          item.responseBody,
        ]),
        (await attemptRows(page, event.id)).map((row) => row.slice(1)),
      );
    } finally {
      receiver.respondWith({ status: 200 });
      await worker.close();
    }
  });

  test('rotating the secret shows the new one once; a test send then carries signatures of both', async () => {
    const caller = await h.t.newCaller('test', UNLIMITED);
    const endpoint = await registerEndpoint(caller, receiver.url);
    const { page } = await h.newPage();
    await signIn(page, caller.key);
    await page.goto(`/dashboard/webhooks/${endpoint.id}`);
    await page.getByLabel('The old secret keeps signing for').selectOption({ label: '1 hour' });
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.locator('#signing-secret').waitFor();
    const rotated = await textOf(page, '#signing-secret');
    assert.match(rotated, /^whsec_/);
    assert.notEqual(rotated, endpoint.secret);
    const until = shown(new Date(h.t.clock.now().getTime() + 3600_000));
    assert.match(await textOf(page, '#secret-title + p'), new RegExp(`Until ${until} deliveries also carry`));
    // Reloading the answer rotates nothing more: the secret shown is still the one that signs.
    assert.equal((await page.reload())?.status(), 409);
    assert.equal(await textOf(page, 'h1'), 'The new secret was already shown');
    await page.getByRole('link', { name: `Back to webhook endpoint ${endpoint.id}` }).click();

    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.waitForURL(`**/dashboard/webhooks/${endpoint.id}?done=tested`);
    assert.equal(await page.locator('#signing-secret').count(), 0, 'shown once');
    assert.equal(await textOf(page, '#test-sends tbody tr td[data-label="Result"]'), 'HTTP 200');
    const ping = receiver.received.at(-1)!;
    const header = String(ping.headers['mh-signature']);
    assert.equal(header.match(/v1=/g)?.length, 2);
    const now = { now: h.t.clock.now() };
    assert.equal(verifyWebhook(ping.body, header, rotated, now).type, 'ping');
    assert.equal(verifyWebhook(ping.body, header, endpoint.secret, now).type, 'ping');
  });

  test('an endpoint disabled after 3 days of failures is enabled again; another is deleted, by keyboard', async () => {
    const caller = await h.t.newCaller('test', UNLIMITED);
    const failing = await registerEndpoint(caller, receiver.url);
    const worker = workerFor(h.t);
    try {
      receiver.respondWith({ status: 500 });
      await createTransfer(caller);
      const start = h.t.clock.now().getTime();
      for (const offset of nominalSchedule()) {
        h.t.clock.set(new Date(start + offset));
        await worker.runOnce();
      }
    } finally {
      receiver.respondWith({ status: 200 });
      await worker.close();
    }
    assert.equal((await caller.get('/api/v1/webhooks')).json().items[0].isActive, false);

    const { page } = await h.newPage();
    await signIn(page, caller.key);
    await page.goto(`/dashboard/webhooks/${failing.id}`);
    assert.equal(await textOf(page, '#endpoint-status'), 'disabled');
    assert.equal(await textOf(page, `[id^="delivery-"] .delivery-status`), 'failed');
    await page.getByRole('button', { name: 'Enable endpoint' }).click();
    await page.waitForURL(`**/dashboard/webhooks/${failing.id}?done=enabled`);
    assert.equal(await textOf(page, '#endpoint-status'), 'active');
    assert.equal(await page.getByRole('button', { name: 'Enable endpoint' }).count(), 0);
    assert.equal((await caller.get('/api/v1/webhooks')).json().items[0].isActive, true);

    // Delete: tick the box and press the button, keyboard only.
    await page.getByLabel('Stop all deliveries to this endpoint for good').focus();
    await page.keyboard.press('Space');
    await page.keyboard.press('Tab');
    assert.equal((await focused(page)).text, 'Delete endpoint');
    await page.keyboard.press('Enter');
    await page.waitForURL(`**/dashboard/webhooks?deleted=${failing.id}`);
    assert.equal(
      await textOf(page, '[role="status"].notice'),
      `Webhook endpoint ${failing.id} was deleted: nothing more is sent to it.`,
    );
    assert.equal(await textOf(page, '#endpoint-rows'), 'No webhook endpoints yet. Register one below.');
    assert.deepEqual((await caller.get('/api/v1/webhooks')).json().items, []);
    const gone = await page.goto(`/dashboard/webhooks/${failing.id}`);
    assert.equal(gone?.status(), 404);
  });

  test('another integration’s or mode’s endpoint is not found; at a phone’s width nothing scrolls sideways', async () => {
    const owner = await h.t.newCaller('test', UNLIMITED);
    const endpoint = await registerEndpoint(owner, `${receiver.url}/${'a-long-path-segment-'.repeat(6)}`);
    const other = await h.t.newCaller('test', UNLIMITED);
    const live = await h.t.createKey(owner.integrationId, 'live');
    for (const key of [other.key, live.key]) {
      const { page } = await h.newPage();
      await signIn(page, key);
      const response = await page.goto(`/dashboard/webhooks/${endpoint.id}`);
      assert.equal(response?.status(), 404);
      assert.equal(await textOf(page, 'h1'), 'Webhook endpoint not found');
      const refused = await page.request.post(`/dashboard/webhooks/${endpoint.id}/rotate-secret`, {
        form: { overlapSeconds: '0' },
        headers: { origin: h.origin },
      });
      // Its page gave this session no rotate form, so no token for one: the form is refused as out of date.
      assert.equal(refused.status(), 400);
      assert.match(await refused.text(), /This form is out of date/);
      await page.goto('/dashboard/webhooks');
      assert.equal(await textOf(page, '#endpoint-rows'), 'No webhook endpoints yet. Register one below.');
    }
    // Nothing was rotated: a test send carries one signature, by the secret it was registered with.
    assert.equal((await owner.post(`/api/v1/webhooks/${endpoint.id}/test`)).statusCode, 200);
    const ping = receiver.received.at(-1)!;
    assert.equal(String(ping.headers['mh-signature']).match(/v1=/g)?.length, 1);
    verifyWebhook(ping.body, ping.headers['mh-signature'], endpoint.secret, { now: h.t.clock.now() });

    const phone = await h.newPage({ width: 375, height: 800 });
    await signIn(phone.page, owner.key);
    await phone.page.goto('/dashboard/webhooks');
    assert.equal(await horizontalOverflow(phone.page), 0, 'the list fits 375 px');
    await phone.page.goto(`/dashboard/webhooks/${endpoint.id}`);
    assert.equal(await horizontalOverflow(phone.page), 0, 'the endpoint fits 375 px');
  });
});
