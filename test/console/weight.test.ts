// The console's weight budget, in real Chromium against the real app: each page's HTML and its
// first load (signed in, nothing cached: the HTML, the stylesheet, the scripts) in bytes as they
// come over the wire, headers included and compressed as the service compresses them. Each may
// weigh a quarter more than it did when last measured (`npm run bench -- console`, figures in
// docs/integrating.md, "What a page weighs"): a page that doubles, or loses its compression, fails
// here. Bytes only: how long a load takes on a test machine says nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { browserUnavailable, launchBrowser } from '../helpers/browser.ts';
import { makeConsoleData, seedOlderTransfers } from '../helpers/console-data.ts';
import { type ConsolePageName, consoleSections, weighConsole } from '../helpers/page-weight.ts';

/** What each page weighed when last measured, in KB (1024 bytes) transferred: its HTML, its first load. */
const MEASURED: Record<ConsolePageName, { html: number; firstLoad: number }> = {
  'sign-in': { html: 1.5, firstLoad: 7.4 },
  transfers: { html: 3.1, firstLoad: 26.4 },
  'transfer (in flight)': { html: 3.2, firstLoad: 26.5 },
  webhooks: { html: 2.5, firstLoad: 8.4 },
  webhook: { html: 4.0, firstLoad: 27.3 },
  usage: { html: 4.3, firstLoad: 10.2 },
  earnings: { html: 2.7, firstLoad: 8.6 },
  'operator sign-in': { html: 1.6, firstLoad: 7.5 },
  'operator integrations': { html: 1.9, firstLoad: 7.8 },
  'operator integration': { html: 2.5, firstLoad: 8.4 },
  'operator platform': { html: 2.4, firstLoad: 8.3 },
  'operator keeper': { html: 2.7, firstLoad: 26.1 },
};
/** How much a page may grow over its measured weight before it fails. */
const HEADROOM = 1.25;
const KB = 1024;

describe('what the console’s pages weigh', { skip: browserUnavailable() }, () => {
  let t: TestApp;
  let browser: Browser;
  before(async () => {
    t = await createTestApp();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('each page’s HTML and its first load with nothing cached stay within a quarter of their measured weight, compressed', async (context) => {
    const data = await makeConsoleData(t);
    await seedOlderTransfers(t, data.caller.integrationId);
    await data.receiver.close();
    const origin = new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).origin;
    const sections = consoleSections({
      ...data,
      key: data.caller.key,
      integrationId: data.caller.integrationId,
    });
    const weights = await weighConsole(browser, origin, sections, { again: false });

    const figures = weights.map(({ page, first }) => {
      const measured = MEASURED[page.name];
      return {
        page: page.name,
        html: `${(first.htmlBytes / KB).toFixed(1)} KB (budget ${(measured.html * HEADROOM).toFixed(1)})`,
        firstLoad: `${(first.bytes / KB).toFixed(1)} KB (budget ${(measured.firstLoad * HEADROOM).toFixed(1)})`,
        over:
          first.htmlBytes > measured.html * HEADROOM * KB || first.bytes > measured.firstLoad * HEADROOM * KB,
      };
    });
    context.diagnostic(JSON.stringify(figures.map(({ over: _, ...figure }) => figure)));
    assert.deepEqual(
      figures.filter((figure) => figure.over),
      [],
      'pages over their budget (update MEASURED and docs/integrating.md when the growth is meant)',
    );

    // What is worth compressing goes compressed: every page, stylesheet and script over 1 KB.
    const uncompressed = weights
      .flatMap(({ first }) => first.fetched)
      .filter((fetched) => fetched.decodedBytes > KB && fetched.encoding === undefined)
      .map((fetched) => `${fetched.type} ${new URL(fetched.url).pathname}`);
    assert.deepEqual([...new Set(uncompressed)], []);
  });
});
