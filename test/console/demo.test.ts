// `npm run demo` watched in the console, as a person does it: `npm start` on a fresh data
// directory, the demo beside it with --step (it moves the local chain's clock to a hop's due time
// when Enter is pressed), and Chromium signed in with the test key the demo printed, on the
// transfer's page whose address it printed. Enter is pressed only once the page, refreshing
// itself, shows the hops landed so far: each hop is seen landing, one at a time, until the
// transfer reads completed.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { browserUnavailable, launchBrowser } from '../helpers/browser.ts';
import { type ServiceProcess, startDemoProcess, startServiceProcess } from '../helpers/process.ts';
import { signIn, textOf } from './helpers.ts';

const HOPS = 3;

/** Waits until the element's text contains `text` (the page refreshes itself every 2 s). */
const waitForText = (page: Page, selector: string, text: string) =>
  page.locator(selector, { hasText: text }).waitFor({ timeout: 20_000 });

describe('the demo’s transfer in the console', { skip: browserUnavailable() }, () => {
  let dataDir: string;
  let service: ServiceProcess | undefined;
  let browser: Browser | undefined;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tr-console-demo-'));
    service = await startServiceProcess({ DATA_DIR: dataDir }, { via: 'npm' });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    // SIGTERM to npm stops the service with it (test/process/npm-start.test.ts).
    await service?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('`npm run demo -- --step`: its transfer, opened from the address it prints with the key it prints, goes to completed hop by hop before the watcher’s eyes', async () => {
    // A long arrival: no hop falls due by the wall's clock, only when Enter moves the chain's.
    const demo = startDemoProcess(['--step', '--arrival', '600'], { DATA_DIR: dataDir });
    try {
      const [, key] = await demo.printed(/^ {2}key +(mh_test_\S+) \(a new test key /m);
      const [, address, id] = await demo.printed(
        /^ {2}console +(http:\/\/\S+\/dashboard\/transfers\/(\d+)) \(sign in with the key above to watch it\)$/m,
      );
      assert.equal(new URL(address!).origin, service!.url, 'the console of the service the demo used');

      const context = await browser!.newContext({ baseURL: service!.url });
      const page = await context.newPage();
      await signIn(page, key!);
      await page.goto(address!);
      assert.equal(await textOf(page, 'h1'), `Transfer ${id}`);
      // From here on the page is never loaded again: htmx refreshes its live part.
      let loads = 0;
      page.on('framenavigated', (frame) => {
        if (frame === page.mainFrame()) loads++;
      });

      const seen: string[] = [];
      for (let hop = 1; hop <= HOPS; hop++) {
        // The demo waits for Enter: the chain's clock stands still, so what the page shows now is
        // what it must show until Enter.
        await demo.printed(
          new RegExp(`^ {2}- --step: press Enter to move the chain's clock to hop ${hop}'s due time$`, 'm'),
        );
        await waitForText(page, '#transfer-status', 'processing');
        await waitForText(page, '#transfer-progress', `${hop - 1} of ${HOPS} hops done`);
        seen.push(await textOf(page, '#transfer-progress'));
        assert.equal(await textOf(page, `#hop-${hop} td[data-label="Landed"]`), 'next');
        for (let landed = 1; landed < hop; landed++) {
          assert.equal(await textOf(page, `#signature-${landed}`), landedSignature(demo.stdout(), landed));
        }
        assert.equal(await page.locator(`#signature-${hop}`).count(), 0, `hop ${hop} has not landed`);
        demo.enter();
      }
      await waitForText(page, '#transfer-status', 'completed');
      seen.push(await textOf(page, '#transfer-progress'));
      assert.deepEqual(
        seen,
        ['0 of 3 hops done', '1 of 3 hops done', '2 of 3 hops done', '3 of 3 hops done'],
        'every hop seen landing, one at a time',
      );
      assert.equal(await page.locator('#transfer-live').getAttribute('hx-trigger'), null, 'refreshing stops');
      assert.equal(loads, 0, 'no reload');

      const { code, stdout, stderr } = await demo.stop();
      assert.equal(code, 0, `${stderr}\n${stdout}`);
      assert.match(stdout, new RegExp(`^5\\. Transfer ${id}: completed \\(phase settled\\)$`, 'm'));
      for (let hop = 1; hop <= HOPS; hop++) {
        assert.equal(await textOf(page, `#signature-${hop}`), landedSignature(stdout, hop));
      }
      await context.close();
    } finally {
      await demo.stop();
    }
  });
});

/** The signature of hop `hop` as the demo printed it landed. */
function landedSignature(stdout: string, hop: number): string {
  const match = new RegExp(`^ {2}hop ${hop} landed +(\\S+) late `, 'm').exec(stdout);
  assert.ok(match, `the demo printed hop ${hop} landed:\n${stdout}`);
  return match[1]!;
}
