// npm run screenshots: pictures of every page of the console, as a person sees them, for the docs
// (docs/console/*.png). It runs the real app as the tests do (test/helpers/app.ts) on embedded
// PGlite and the embedded chain, on a free port, with a manual clock so that the dates shown are
// the same on every run; makes real data through the API, the keeper and the webhook worker
// (test/helpers/console-data.ts); signs in with Chromium as the browser tests do (and to the
// operator's console with the admin token), and saves each page at a desktop's width (1280 px) and
// the usage page at a phone's (375 px).
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { createPgliteDb } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';
import { ADMIN_TOKEN, createTestApp } from '../test/helpers/app.ts';
import { launchBrowser } from '../test/helpers/browser.ts';
import { makeConsoleData } from '../test/helpers/console-data.ts';

const OUT = join(import.meta.dirname, '..', 'docs', 'console');
/** Saves the page at `path` (of the console) as docs/console/<name>.png, the whole page's height. */
async function shoot(page: Page, path: string, name: string) {
  await page.goto(path);
  await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true, animations: 'disabled' });
  process.stdout.write(`docs/console/${name}.png  ${path}\n`);
}

async function main() {
  const db = await createPgliteDb();
  await migrate(db);
  const t = await createTestApp({ database: { url: 'pglite://memory', db, drop: () => db.close() } });
  const browser = await launchBrowser();
  try {
    const data = await makeConsoleData(t);
    const origin = new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).origin;
    await mkdir(OUT, { recursive: true });
    /** A page signed in with the integration's key, at `width` px; the sign-in form saved first if named. */
    const signedIn = async (width: number, signInName?: string) => {
      const context = await browser.newContext({ viewport: { width, height: 800 }, baseURL: origin });
      const page = await context.newPage();
      await page.goto('/dashboard/sign-in');
      if (signInName) await shoot(page, '/dashboard/sign-in', signInName);
      await page.getByLabel('API key').fill(data.caller.key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL('**/dashboard/transfers');
      return { context, page };
    };
    const desktop = await signedIn(1280, 'sign-in');
    await shoot(desktop.page, '/dashboard/transfers', 'transfers');
    await shoot(desktop.page, `/dashboard/transfers/${data.flying}`, 'transfer');
    await shoot(desktop.page, '/dashboard/webhooks', 'webhooks');
    await shoot(desktop.page, `/dashboard/webhooks/${data.endpointId}`, 'webhook');
    await shoot(desktop.page, '/dashboard/usage?days=7', 'usage');
    await shoot(desktop.page, '/dashboard/earnings', 'earnings');
    await desktop.context.close();
    const operator = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: origin });
    const operatorPage = await operator.newPage();
    await shoot(operatorPage, '/dashboard/operator/sign-in', 'operator-sign-in');
    await operatorPage.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await operatorPage.getByRole('button', { name: 'Sign in' }).click();
    await operatorPage.waitForURL('**/dashboard/operator/integrations');
    await shoot(operatorPage, '/dashboard/operator/integrations', 'operator-integrations');
    await shoot(
      operatorPage,
      `/dashboard/operator/integrations/${data.caller.integrationId}`,
      'operator-integration',
    );
    await shoot(operatorPage, '/dashboard/operator/platform', 'operator-platform');
    await shoot(operatorPage, '/dashboard/operator/keeper', 'operator-keeper');
    await operator.close();
    const phone = await signedIn(375);
    await shoot(phone.page, '/dashboard/usage?days=7', 'usage-phone');
    await phone.context.close();
    await data.receiver.close();
  } finally {
    await browser.close();
    await t.close();
    await t.database.drop();
  }
}

await main();
