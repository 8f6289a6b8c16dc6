// The console's transfers, in real Chromium against the real app on the test chain: a transfer
// watched to completion hop by hop as the keeper runs each hop (due time, landing time, lateness,
// signature, timeline), a failed transfer's error and rescue figures, the list's filters and
// pages, test and live data and integrations kept apart, keyboard use and a phone's width.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { address } from '@solana/kit';
import type { Page } from 'playwright-core';
import { rawToTokens } from '../../src/domain/amounts.ts';
import { type Caller, createTransfer, SOL_MINT } from '../helpers/app.ts';
import { browserUnavailable } from '../helpers/browser.ts';
import { createMint } from '../helpers/chain.ts';
import { deployRoute, quoteRoute } from '../helpers/route.ts';
import { failLastHop, getTransfer, routeRow, travelPast, UNLIMITED } from '../recovery/helpers.ts';
import {
  type ConsoleHarness,
  clipboardText,
  focused,
  horizontalOverflow,
  signIn,
  startConsole,
  textOf,
  unlabelledControls,
} from './helpers.ts';

/** A time as the console shows every time: `2026-06-01 12:00:05 UTC`. */
const shown = (unixSeconds: bigint | number) =>
  `${new Date(Number(unixSeconds) * 1000).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
const sol = (lamports: number) => `${rawToTokens(BigInt(lamports), 9)} SOL`;

/** Waits until the element's text contains `text` (the page refreshes itself every 2 s). */
const waitForText = (page: Page, selector: string, text: string) =>
  page.locator(selector, { hasText: text }).waitFor({ timeout: 20_000 });

describe('transfers in the console', { skip: browserUnavailable() }, () => {
  let h: ConsoleHarness;
  let caller: Caller;
  before(async () => {
    h = await startConsole();
    caller = await h.t.newCaller('test', UNLIMITED);
  });
  after(() => h?.close());

  test('a transfer goes to completed hop by hop before the watcher’s eyes, each hop with due time, landing, lateness and signature', async () => {
    const { t } = h;
    const route = await quoteRoute(t, caller, { hops: 3, mint: address(SOL_MINT), arrivalSeconds: 180 });
    await deployRoute(t, caller, route);
    const row = await routeRow(t, route.id);
    const dueAt = (hop: number) => row.firstReleaseAt! + BigInt((hop - 1) * row.intervalSeconds!);

    const { context, page } = await h.newPage();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.origin });
    await signIn(page, caller.key);
    // The list, open in a second tab, follows the transfer's status too.
    const list = await context.newPage();
    await list.goto('/dashboard/transfers');
    assert.equal(await textOf(list, `tr:has(a[href$="/transfers/${route.id}"]) .badge`), 'processing');

    await page.getByRole('link', { name: `Transfer ${route.id}` }).click();
    await page.waitForURL(`**/dashboard/transfers/${route.id}`);
    assert.equal(await textOf(page, '#transfer-status'), 'processing');
    assert.equal(await textOf(page, '#transfer-progress'), '0 of 3 hops done');
    assert.equal(await textOf(page, '#hop-1 td[data-label="Due"]'), shown(dueAt(1)));
    assert.equal(await textOf(page, '#hop-1 td[data-label="Landed"]'), 'next');
    assert.match(
      await textOf(page, '#next-title + p'),
      new RegExp(`Hop 1 of 3 is due at ${shown(dueAt(1))}`),
    );

    for (let hop = 1; hop <= 3; hop++) {
      await travelPast(t, dueAt(hop));
      assert.equal(await t.keeper.runOnce(), 1, `hop ${hop} runs`);
      // No reload: the page refreshes itself.
      await waitForText(page, '#transfer-progress', `${hop} of 3 hops done`);
      const signature = (await getTransfer(caller, route.id)).signatures.hops[hop - 1];
      const landed = await t.chain.chain.getTransaction(signature);
      assert.equal(await textOf(page, `#signature-${hop}`), signature);
      assert.equal(await textOf(page, `#hop-${hop} td[data-label="Landed"]`), shown(landed!.blockTime!));
      const late = Number(landed!.blockTime! - dueAt(hop));
      assert.equal(await textOf(page, `#hop-${hop} td[data-label="Lateness"]`), `${late} s late`);
    }
    await waitForText(page, '#transfer-status', 'completed');
    assert.equal(await page.locator('#transfer-live').getAttribute('hx-trigger'), null, 'refreshing stops');
    await waitForText(list, `tr:has(a[href$="/transfers/${route.id}"]) .badge`, 'completed');

    const completed = await getTransfer(caller, route.id);
    assert.equal(
      await textOf(page, '#next-title + p'),
      `Reclaim the rent. The source can get ${sol(completed.recovery.reclaimableLamports)} back: POST /api/v1/transfers/${route.id}/reclaim-rent/prepare, sign and broadcast, then reclaim-rent/confirm (the TypeScript client's reclaimRent does all three).`,
    );
    // Every event, in order, with its sequence number.
    const { rows: events } = await t.database.db.query<{ sequence: number; type: string }>(
      'SELECT sequence, type FROM events WHERE transfer_id = $1 ORDER BY sequence',
      [route.id],
    );
    const timeline = await page.locator('.timeline li').evaluateAll((items) =>
      items.map((item) => ({
        sequence: item.querySelector('.seq')?.textContent,
        type: item.querySelector('.what .muted')?.textContent,
      })),
    );
    assert.deepEqual(
      timeline,
      events.map((event) => ({ sequence: `#${event.sequence}`, type: event.type })),
    );
    assert.deepEqual(
      events.filter((event) => event.type === 'transfer.hop_complete').length,
      3,
      'one hop_complete per hop',
    );

    // The signature copies whole; the local chain has no public explorer to link to.
    await page.locator('#copy-2').click();
    assert.equal(await clipboardText(page), completed.signatures.hops[1]);
    assert.equal(await textOf(page, '#announcer'), 'Copied to the clipboard.');
    assert.equal(await page.getByRole('link', { name: /Explorer/ }).count(), 0);

    // At a phone's width nothing scrolls sideways, full signatures included.
    const phone = await h.newPage({ width: 375, height: 800 });
    await signIn(phone.page, caller.key);
    assert.equal(await horizontalOverflow(phone.page), 0, 'the list fits 375 px');
    await phone.page.goto(`/dashboard/transfers/${route.id}`);
    assert.equal(await horizontalOverflow(phone.page), 0, 'the transfer fits 375 px');
  });

  test('a failed transfer says what went wrong, what the source can rescue, and what to do', async () => {
    const { t } = h;
    const usdc = await createMint(t.chain, { decimals: 6 });
    const route = await quoteRoute(t, caller, { hops: 3, mint: usdc, arrivalSeconds: 180 });
    await deployRoute(t, caller, route);
    await failLastHop(t, route);
    const failed = await getTransfer(caller, route.id);
    assert.equal(failed.status, 'failed');

    const { page } = await h.newPage();
    await signIn(page, caller.key);
    await page.goto(`/dashboard/transfers/${route.id}`);
    assert.equal(await textOf(page, '#transfer-status'), 'failed');
    assert.equal(await page.locator('#transfer-live').getAttribute('hx-trigger'), null);
    assert.equal(
      await textOf(page, '#error-title + p'),
      `MH_031 Route creation failed: ${failed.lastError.message}`,
    );
    assert.equal(
      await textOf(page, '#rescue-figure'),
      `possible: ${sol(failed.recovery.rescuableLamports)} and the route's tokens back to the source`,
    );
    assert.equal(await textOf(page, '#reclaim-figure'), 'not possible now');
    const accounts = await page
      .locator('#recovery-title ~ table tbody tr')
      .evaluateAll((rows) => rows.map((row) => [...row.cells].map((cell) => cell.textContent)));
    const kinds: Record<string, string> = {
      route_pda: 'route account',
      step_state: 'hop step state',
      ata: 'token account',
      orchestrator_config: 'source’s orchestrator config',
      keeper: 'route’s keeper',
    };
    assert.deepEqual(
      accounts,
      failed.recovery.rescuableAccounts.map((account: { kind: string; lamports: number }) => [
        kinds[account.kind],
        sol(account.lamports),
      ]),
    );
    assert.equal(
      await textOf(page, '#next-title + p'),
      `Rescue the funds. The source wallet gets ${sol(failed.recovery.rescuableLamports)} and the route's tokens back: POST /api/v1/transfers/${route.id}/rescue/prepare, sign and broadcast, then rescue/confirm (the TypeScript client's rescue does all three).`,
    );
    assert.equal(await textOf(page, '#hop-3 td[data-label="Landed"]'), 'not yet');
  });

  test('the list filters as the API does and pages with Next and Previous; all by keyboard', async () => {
    const lister = await h.t.newCaller('test', UNLIMITED);
    const ids: number[] = [];
    for (let index = 1; index <= 27; index++) ids.push((await createTransfer(lister, `order-${index}`)).id);
    const { page } = await h.newPage();
    await signIn(page, lister.key);
    assert.equal(await textOf(page, '.page-head p'), '1–25 of 27');
    const listed = () =>
      page.locator('#transfer-rows a').evaluateAll((links) => links.map((link) => link.textContent));
    assert.deepEqual(
      await listed(),
      ids
        .slice(2)
        .reverse()
        .map((id) => `Transfer ${id}`),
      'newest first',
    );

    await page.getByRole('link', { name: 'Next →' }).click();
    assert.equal(await textOf(page, '.page-head p'), '26–27 of 27');
    assert.deepEqual(await listed(), [`Transfer ${ids[1]}`, `Transfer ${ids[0]}`]);
    assert.equal(await page.getByRole('link', { name: 'Next →' }).count(), 0);
    await page.getByRole('link', { name: '← Previous' }).click();
    assert.equal(await textOf(page, '.page-head p'), '1–25 of 27');

    // Filter by external id with the keyboard: Tab to the field, type, Enter.
    await page.getByLabel('External id').focus();
    await page.keyboard.type('order-4');
    await page.keyboard.press('Enter');
    await page.waitForURL('**/dashboard/transfers?**externalId=order-4**');
    assert.deepEqual(await listed(), [`Transfer ${ids[3]}`]);
    assert.deepEqual(await unlabelledControls(page), []);
    await page.getByLabel('Status').selectOption('completed');
    await page.getByRole('button', { name: 'Filter' }).click();
    assert.equal(await textOf(page, '#transfer-rows'), 'No transfers match these filters.');

    // Tab from the top of the page to a transfer and open it with Enter.
    await page.goto('/dashboard/transfers');
    const newest = `Transfer ${ids[26]}`;
    for (let presses = 0; presses < 30 && (await focused(page)).text !== newest; presses++) {
      await page.keyboard.press('Tab');
    }
    assert.equal((await focused(page)).text, newest, 'Tab reaches the newest transfer');
    await page.keyboard.press('Enter');
    await page.waitForURL(`**/dashboard/transfers/${ids[26]}`);
  });

  test('test and live data never mix, and one integration never sees another’s transfers', async () => {
    const { t } = h;
    const a = await t.newCaller('test', UNLIMITED);
    const aLive = await t.createKey(a.integrationId, 'live');
    const b = await t.newCaller('test', UNLIMITED);
    const testTransfer = await createTransfer(a, 'a-test');

    const live = await h.newPage();
    await signIn(live.page, aLive.key);
    assert.equal(await textOf(live.page, '.badge.mode-live'), 'Live mode');
    assert.equal(await live.page.locator('.mode-banner').count(), 0, 'no test banner');
    assert.equal(await textOf(live.page, '#transfer-rows'), 'No transfers yet.');
    const missing = await live.page.goto(`/dashboard/transfers/${testTransfer.id}`);
    assert.equal(missing?.status(), 404);
    assert.equal(await textOf(live.page, 'h1'), 'Transfer not found');
    assert.equal(
      await textOf(live.page, '[role="alert"]'),
      `There is no transfer with id ${testTransfer.id} in this integration's live data.`,
    );

    const other = await h.newPage();
    await signIn(other.page, b.key);
    assert.equal(await other.page.locator(`a[href$="/transfers/${testTransfer.id}"]`).count(), 0);
    const foreign = await other.page.goto(`/dashboard/transfers/${testTransfer.id}`);
    assert.equal(foreign?.status(), 404);
    assert.equal(await textOf(other.page, 'h1'), 'Transfer not found');

    // The owner's test session sees it.
    const own = await h.newPage();
    await signIn(own.page, a.key);
    assert.equal(await textOf(own.page, '#transfer-rows a'), `Transfer ${testTransfer.id}`);
  });
});
