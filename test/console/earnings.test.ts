// The console's usage and earnings, in real Chromium against the real app on the embedded chain:
// the usage figures and charts (with their tables) as GET /usage reports them, the rewards balance
// to the lamport and the token base unit, a claim made with the keyboard whose payout lands on
// chain, test and live kept apart, labels, and a phone's width.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, generateKeyPairSigner, type Signature } from '@solana/kit';
import { rawToTokens } from '../../src/domain/amounts.ts';
import { SOL_MINT } from '../helpers/app.ts';
import { browserUnavailable } from '../helpers/browser.ts';
import { createMint } from '../helpers/chain.ts';
import { tokenBalance } from '../helpers/route.ts';
import { settleRoute } from '../rewards/helpers.ts';
import {
  type ConsoleHarness,
  focused,
  horizontalOverflow,
  signIn,
  startConsole,
  textOf,
  unlabelledControls,
} from './helpers.ts';

/** Flat fees large enough that a few transfers earn more than the minimum claim: 900,000 lamports each. */
const EARNING = { rateLimitMultiplier: 1000, fees: { flatFeeLamportsPerHop: '1000000' } };
const DAY_MS = 24 * 3600_000;
const sol = (lamports: bigint | number) => `${rawToTokens(BigInt(lamports), 9)} SOL`;
const usd = (value: number) =>
  new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(value);
/** A mint without a symbol, as the console names it. */
const abridged = (mint: string) => `${mint.slice(0, 4)}…${mint.slice(-4)}`;

/** The cells of a table's body rows, as text. */
const cells = (page: import('playwright-core').Page, selector: string) =>
  page
    .locator(`${selector} tbody tr`)
    .evaluateAll((rows) =>
      rows.map((row) =>
        [...row.querySelectorAll('th, td')].map((cell) => cell.textContent?.replace(/\s+/g, ' ').trim()),
      ),
    );

describe('usage and earnings in the console', { skip: browserUnavailable() }, () => {
  let h: ConsoleHarness;
  let usdc: Address;
  before(async () => {
    h = await startConsole();
    usdc = await createMint(h.t.chain, { decimals: 6 });
  });
  after(() => h?.close());

  test('usage: the totals, the counts by status and each day’s figures are GET /usage’s for the window; the charts say so in words', async () => {
    const caller = await h.t.newCaller('test', EARNING);
    await settleRoute(h.t, caller, SOL_MINT as Address);
    h.t.clock.advance(DAY_MS);
    await settleRoute(h.t, caller, usdc);
    await settleRoute(h.t, caller, SOL_MINT as Address);

    const { page } = await h.newPage();
    await signIn(page, caller.key);
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('link', { name: 'Last 7 days' }).click();
    await page.waitForURL('**/dashboard/usage?days=7');
    const now = h.t.clock.now();
    const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    const day = (offset: number) => new Date(today.getTime() + offset * DAY_MS);
    const window = (from: Date, to: Date) =>
      caller
        .get(`/api/v1/usage?fromDate=${from.toISOString()}&toDate=${to.toISOString()}`)
        .then((r) => r.json());
    const usage = await window(day(-6), day(1));

    assert.equal(await textOf(page, '#total-transfers'), String(usage.totalTransfers));
    assert.equal(usage.totalTransfers, 3);
    assert.equal(await textOf(page, '#total-volume'), usd(usage.totalVolumeUsd));
    assert.equal(await textOf(page, '#total-revenue'), sol(usage.totalRevenueLamports));
    const counts = await page
      .locator('#status-counts [data-field]')
      .evaluateAll((items) =>
        items.map((item) => [item.getAttribute('data-field'), Number(item.textContent)]),
      );
    for (const [field, count] of counts) assert.equal(count, usage[field as string], field as string);
    assert.equal(counts.length, 8, 'every status and the total');
    assert.deepEqual(await cells(page, '#revenue-by-mint'), [
      ...Object.entries(usage.revenueByMint as Record<string, string>).map(([mint, raw]) => {
        const name = mint === SOL_MINT ? 'SOL' : abridged(mint);
        const decimals = mint === SOL_MINT ? 9 : 6;
        return [name, `${rawToTokens(BigInt(raw), decimals)} ${name} (${raw} base units)`];
      }),
    ]);

    // Each chart: one bar per day, and its table gives every day's figure exactly.
    assert.equal(await page.locator('#chart-volume rect').count(), 7);
    const yesterday = await window(day(-1), day(0));
    const rows = await cells(page, '#chart-revenue-sol');
    assert.equal(rows.length, 7);
    assert.deepEqual(rows.at(-2), [day(-1).toISOString().slice(0, 10), sol(yesterday.totalRevenueLamports)]);
    assert.deepEqual(rows.at(-1), [
      day(0).toISOString().slice(0, 10),
      sol(usage.totalRevenueLamports - yesterday.totalRevenueLamports),
    ]);
    assert.deepEqual(
      rows.slice(0, 5),
      [-6, -5, -4, -3, -2].map((offset) => [day(offset).toISOString().slice(0, 10), '0 SOL']),
    );
    assert.equal(
      await textOf(page, '#chart-volume tfoot td'),
      usd(usage.totalVolumeUsd),
      'the table adds up to GET /usage',
    );
    // A screen reader hears the chart's title and what it shows.
    const described = await page.locator('#chart-volume svg').evaluate((svg) =>
      (svg.getAttribute('aria-labelledby') ?? '')
        .split(' ')
        .map((id: string) => svg.ownerDocument.getElementById(id)?.textContent)
        .join(' '),
    );
    const highest = Math.max(yesterday.totalVolumeUsd, usage.totalVolumeUsd - yesterday.totalVolumeUsd);
    assert.match(
      described,
      new RegExp(
        `^Volume \\(USD\\) of completed transfers, by day created Volume .*: ${usd(usage.totalVolumeUsd).replace('$', '\\$')} in all; the highest, ${usd(highest).replace('$', '\\$')}, on `,
      ),
    );
    assert.equal(await page.locator('#chart-volume svg').getAttribute('role'), 'img');
    assert.deepEqual(await unlabelledControls(page), []);

    const phone = await h.newPage({ width: 375, height: 800 });
    await signIn(phone.page, caller.key);
    await phone.page.goto('/dashboard/usage');
    assert.equal(await horizontalOverflow(phone.page), 0, 'the usage page fits 375 px');
  });

  test('earnings: the balance to the base unit; a claim made by keyboard pays the wallet on chain, and lists its payout', async () => {
    const caller = await h.t.newCaller('test', EARNING);
    // Three transfers' flat fee shares cover the rent of the wallet's USDC account the claim opens.
    await settleRoute(h.t, caller, usdc);
    await settleRoute(h.t, caller, SOL_MINT as Address);
    await settleRoute(h.t, caller, SOL_MINT as Address);

    const { page } = await h.newPage();
    await signIn(page, caller.key);
    await page.goto('/dashboard/earnings');
    assert.equal(await textOf(page, '#rewards-wallet'), 'not set: set it with POST /api/v1/rewards/wallet');
    assert.equal(await page.getByRole('button', { name: /^Claim/ }).count(), 0);

    const wallet = (await generateKeyPairSigner()).address;
    assert.equal((await caller.post('/api/v1/rewards/wallet', { wallet })).statusCode, 200);
    const rewards = (await caller.get('/api/v1/rewards')).json();
    await page.reload();
    assert.equal(await textOf(page, '#rewards-wallet'), wallet);
    const name = (mint: string) => (mint === SOL_MINT ? 'SOL' : abridged(mint));
    const decimals = (mint: string) => (mint === SOL_MINT ? 9 : 6);
    const amount = (mint: string, raw: string) => `${rawToTokens(BigInt(raw), decimals(mint))} ${name(mint)}`;
    assert.deepEqual(await cells(page, '.balances'), [
      [
        'SOL Flat fee shares',
        sol(rewards.lamports.accrued),
        sol(rewards.lamports.claimed),
        sol(rewards.lamports.claimable),
      ],
      ...rewards.tokens.map(
        (token: { mint: string; accruedRaw: string; claimedRaw: string; claimableRaw: string }) => [
          `${name(token.mint)} Percentage fee shares`,
          amount(token.mint, token.accruedRaw),
          amount(token.mint, token.claimedRaw),
          amount(token.mint, token.claimableRaw),
        ],
      ),
    ]);
    assert.deepEqual(await unlabelledControls(page), []);

    // Claim with the keyboard: Tab from the top of the page to the button, Enter.
    const button = `Claim ${sol(rewards.lamports.claimable)} and tokens`;
    await page.locator('body').focus();
    for (let presses = 0; presses < 30 && (await focused(page)).text !== button; presses++) {
      await page.keyboard.press('Tab');
    }
    assert.equal((await focused(page)).text, button);
    const before = BigInt(await h.t.chain.chain.getBalance(wallet));
    await page.keyboard.press('Enter');
    await page.waitForURL('**/dashboard/earnings?claim=*');

    const [claim] = (await caller.get('/api/v1/rewards/claims')).json().items;
    assert.equal(claim.status, 'confirmed');
    const nativeShare = BigInt(
      claim.tokens.find((token: { mint: string }) => token.mint === SOL_MINT)?.amountRaw ?? '0',
    );
    assert.equal(claim.rentLamports, 2_039_280, 'the wallet’s USDC account was opened from the claim');
    const received = BigInt(claim.lamports - claim.rentLamports);
    // On chain: the wallet got the flat shares less the token account's rent, the native share as
    // SOL, and the token's share in its new token account.
    assert.equal(BigInt(await h.t.chain.chain.getBalance(wallet)) - before, received + nativeShare);
    const usdcShare = claim.tokens.find((token: { mint: string }) => token.mint === usdc);
    assert.equal(await tokenBalance(h.t, wallet, usdc), BigInt(usdcShare.amountRaw));
    const [signature] = claim.signatures;
    assert.ok(await h.t.chain.chain.getTransaction(signature as Signature), 'the payout landed');

    const paid = [
      sol(received),
      ...claim.tokens.map((token: { mint: string; amountRaw: string }) =>
        amount(token.mint, token.amountRaw),
      ),
    ];
    assert.equal(
      await textOf(page, '#claim-notice'),
      `Claim ${claim.id} confirmed: ${paid.join(', ')} paid to ${wallet}.`,
    );
    assert.equal(await textOf(page, `#claim-signature-${claim.id}`), signature);
    assert.equal(await textOf(page, `#claim-${claim.id} .badge`), 'confirmed');
    assert.equal(
      await page.getByRole('link', { name: /Explorer/ }).count(),
      0,
      'no public explorer for the local chain',
    );
    // Everything was claimed: nothing is left to claim.
    assert.equal(await page.getByRole('button', { name: /^Claim/ }).count(), 0);
    assert.match(await textOf(page, '#claim-title ~ p'), /^Nothing to claim yet: 0 SOL is claimable/);

    const phone = await h.newPage({ width: 375, height: 800 });
    await signIn(phone.page, caller.key);
    await phone.page.goto('/dashboard/earnings');
    assert.equal(await horizontalOverflow(phone.page), 0, 'the earnings page fits 375 px');
  });

  test('a claim below the minimum is refused with the API’s reason; live data is apart from test data', async () => {
    const caller = await h.t.newCaller('test', EARNING);
    await settleRoute(h.t, caller, usdc);
    const wallet = (await generateKeyPairSigner()).address;
    assert.equal((await caller.post('/api/v1/rewards/wallet', { wallet })).statusCode, 200);
    const { page } = await h.newPage();
    await signIn(page, caller.key);
    await page.goto('/dashboard/earnings');
    assert.equal(
      await textOf(page, '#claim-title ~ p'),
      `Nothing to claim yet: ${sol(900_000)} is claimable, ${sol(100_000)} short of the minimum.`,
    );
    // The form as it would be sent by a page made before the balance changed: the API's answer.
    const refused = await page.request.post('/dashboard/earnings/claim', {
      form: { requestKey: 'console-AAAAAAAAAAAAAAAA' },
      headers: { origin: h.origin },
    });
    assert.equal(refused.status(), 400);
    assert.match(
      await refused.text(),
      /Claimable rewards are 900000 lamports; a claim needs at least 1000000\./,
    );
    assert.equal((await caller.get('/api/v1/rewards/claims')).json().pagination.total, 0);

    const live = await h.t.createKey(caller.integrationId, 'live');
    const liveSession = await h.newPage();
    await signIn(liveSession.page, live.key);
    await liveSession.page.goto('/dashboard/earnings');
    assert.deepEqual((await cells(liveSession.page, '.balances'))[0], [
      'SOL Flat fee shares',
      '0 SOL',
      '0 SOL',
      '0 SOL',
    ]);
    assert.equal(
      await textOf(liveSession.page, '#rewards-wallet'),
      'not set: set it with POST /api/v1/rewards/wallet',
    );
    await liveSession.page.goto('/dashboard/usage');
    assert.equal(await textOf(liveSession.page, '#total-transfers'), '0');
  });
});
