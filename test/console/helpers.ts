// What the console's browser tests share: the real app listening on a port of its own (a browser
// needs a real server), headless Chromium, and what a person does first: sign in.
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createTestApp, type TestApp, type TestAppOptions } from '../helpers/app.ts';
import { launchBrowser } from '../helpers/browser.ts';

// The functions below that take no Node values run in the page (playwright serialises them); the
// project compiles without the DOM library, so the little of it they use is declared here.
interface PageElement {
  id: string;
  textContent: string | null;
  outerHTML: string;
  getAttribute(name: string): string | null;
}
interface PageControl extends PageElement {
  type: string;
  labels: { length: number } | null;
}
declare const document: {
  activeElement: PageElement | null;
  cookie: string;
  documentElement: { scrollWidth: number };
  querySelectorAll(selector: string): Iterable<PageControl>;
};
declare const window: { innerWidth: number };
declare const navigator: { clipboard: { readText(): Promise<string> } };

/** A test app served on 127.0.0.1 with a browser to drive it. */
export interface ConsoleHarness {
  t: TestApp;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  browser: Browser;
  /** A fresh browser context (its own cookies), at desktop width unless told otherwise. */
  newPage(options?: { width?: number; height?: number }): Promise<{ context: BrowserContext; page: Page }>;
  close(): Promise<void>;
}

/** Starts the app on a free port and Chromium. */
export async function startConsole(options: TestAppOptions = {}): Promise<ConsoleHarness> {
  const t = await createTestApp(options);
  const url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const origin = new URL(url).origin;
  let browser: Browser;
  try {
    browser = await launchBrowser();
  } catch (error) {
    await t.close();
    throw error;
  }
  const contexts: BrowserContext[] = [];
  return {
    t,
    origin,
    browser,
    async newPage({ width = 1280, height = 900 } = {}) {
      const context = await browser.newContext({ viewport: { width, height }, baseURL: origin });
      contexts.push(context);
      return { context, page: await context.newPage() };
    },
    async close() {
      for (const context of contexts) await context.close();
      await browser.close();
      await t.close();
    },
  };
}

/** Signs in through the form as a person does, and waits for the transfers list. */
export async function signIn(page: Page, key: string): Promise<void> {
  await page.goto('/dashboard/sign-in');
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL('**/dashboard/transfers');
}

/** The text of the page's one element matching `selector`. */
export async function textOf(page: Page, selector: string): Promise<string> {
  const text = await page.locator(selector).textContent();
  assert.ok(text !== null, `${selector} is on the page`);
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * Every form control of the page that a person can reach has a label a screen reader announces
 * (a <label>, aria-label or aria-labelledby): the controls that have none, by name.
 */
export function unlabelledControls(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('input, select, textarea')]
      .filter((control) => control.type !== 'hidden')
      .filter(
        (control) =>
          (control.labels?.length ?? 0) === 0 &&
          !control.getAttribute('aria-label') &&
          !control.getAttribute('aria-labelledby'),
      )
      .map((control) => control.getAttribute('name') ?? control.outerHTML),
  );
}

/** How far the page is wider than the window (0 when nothing scrolls sideways). */
export function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
}

/** The focused element's id and text ('' when none). */
export function focused(page: Page): Promise<{ id: string; text: string }> {
  return page.evaluate(() => ({
    id: document.activeElement?.id ?? '',
    text: document.activeElement?.textContent ?? '',
  }));
}

/** What the page's scripts can read of its cookies. */
export const scriptCookies = (page: Page) => page.evaluate(() => document.cookie);

/** The text on the clipboard (the context must be granted clipboard-read). */
export const clipboardText = (page: Page) => page.evaluate(() => navigator.clipboard.readText());

/** The headers of a form a console page posts, as a browser on the console's own origin sends them. */
export const FORM_HEADERS = {
  host: 'console.test',
  origin: 'http://console.test',
  'content-type': 'application/x-www-form-urlencoded',
};

/**
 * Signs in without a browser, through a console's sign-in form at `path` (the integrator's with
 * `{ apiKey }`, the operator's with `{ adminToken }`), and answers the session's cookie header.
 */
export async function formSignIn(
  app: FastifyInstance,
  path: string,
  field: Record<string, string>,
  cookieName: string,
): Promise<string> {
  const answer = await app.inject({
    method: 'POST',
    url: path,
    headers: FORM_HEADERS,
    payload: new URLSearchParams(field).toString(),
  });
  assert.equal(answer.statusCode, 303, answer.body);
  return `${cookieName}=${answer.cookies.find((cookie) => cookie.name === cookieName)!.value}`;
}
