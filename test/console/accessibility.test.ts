// Every page of the console checked with axe-core, in real Chromium against the real app, at a
// desktop's width and a phone's (375 px): the rules axe can automate of WCAG 2.1, levels A and AA
// (contrast, names and labels, landmarks, table headers, ids, ...) and its best practices, which
// keep landmarks and heading levels in order. Each page shows the data of
// test/helpers/console-data.ts, signed in as the integrator or the operator; one violation fails.
// Axe does not see keyboard focus: each page is also tabbed through, and every element reached
// must draw a focus ring.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import type { AxeResults, RunOptions } from 'axe-core';
import type { Browser, Page } from 'playwright-core';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { browserUnavailable, launchBrowser } from '../helpers/browser.ts';
import { makeConsoleData, seedOlderTransfers } from '../helpers/console-data.ts';
import { type ConsolePage, type ConsoleSection, consoleSections } from '../helpers/page-weight.ts';

// Run in the page, where axe's script defines it; the project compiles without the DOM library,
// so the little of it used here is declared.
declare const axe: { run(context: unknown, options: RunOptions): Promise<AxeResults> };
interface PageElement {
  outerHTML: string;
}
declare const document: { activeElement: PageElement | null; body: PageElement };
declare function getComputedStyle(element: PageElement): { outlineStyle: string; outlineWidth: string };

const AXE_OPTIONS: RunOptions = {
  runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
  resultTypes: ['violations'],
};
const WIDTHS = [1280, 375];

/** One rule a page breaks: where, which rule, how badly, what it asks, and the offending nodes. */
interface Violation {
  page: string;
  rule: string;
  impact: string;
  help: string;
  nodes: { target: string; summary: string }[];
}

/** Runs axe on the page as it is now, and answers its violations. */
async function check(page: Page, axeSource: string, name: string): Promise<Violation[]> {
  // Evaluated through the DevTools protocol: the console's Content-Security-Policy refuses inline
  // scripts (addScriptTag), and the page is checked as served, its policy on. Once per load.
  if (!(await page.evaluate(() => typeof axe === 'object'))) await page.evaluate(axeSource);
  const results = await page.evaluate((options) => axe.run(document, options), AXE_OPTIONS);
  return results.violations.map((violation) => ({
    page: name,
    rule: violation.id,
    impact: violation.impact ?? 'unknown',
    help: violation.help,
    nodes: violation.nodes.map((node) => ({
      target: node.target.join(' '),
      summary: (node.failureSummary ?? '').replace(/\s+/g, ' ').trim(),
    })),
  }));
}

/**
 * Tabs through the page as a keyboard user does, from its top to where focus leaves its last
 * element, and answers each element reached whose focus draws no outline of 2 px or more (axe
 * does not check that focus is visible).
 */
async function focusWithoutOutline(page: Page): Promise<string[]> {
  const missing: string[] = [];
  for (let presses = 0; presses < 200; presses++) {
    await page.keyboard.press('Tab');
    const focus = await page.evaluate(() => {
      const element = document.activeElement;
      if (element === null || element === document.body) return undefined;
      const style = getComputedStyle(element);
      return {
        html: element.outerHTML.slice(0, 160),
        outlined: style.outlineStyle !== 'none' && Number.parseFloat(style.outlineWidth) >= 2,
      };
    });
    if (focus === undefined) return missing;
    if (!focus.outlined) missing.push(focus.html);
  }
  throw new Error(`${page.url()}: 200 presses of Tab did not leave the page`);
}

/** The violations in words, one rule of one page to a paragraph. */
function describeViolations(violations: Violation[]): string {
  return violations
    .map(
      (violation) =>
        `${violation.page}: ${violation.rule} (${violation.impact}) ${violation.help}\n` +
        violation.nodes.map((node) => `  - ${node.target}: ${node.summary}`).join('\n'),
    )
    .join('\n\n');
}

// The two sections are checked side by side, each in its own browser context.
describe('the console’s accessibility (axe-core, WCAG 2.1 A and AA)', {
  skip: browserUnavailable(),
  concurrency: true,
}, () => {
  let t: TestApp;
  let browser: Browser;
  let origin: string;
  let axeSource: string;
  /** Each part of the console: its sign-in, and its pages with the status each answers (200 unless told). */
  let sections: { signIn: ConsoleSection['signIn']; pages: (ConsolePage & { status?: number })[] }[];
  before(async () => {
    t = await createTestApp();
    browser = await launchBrowser();
    axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    const data = await makeConsoleData(t);
    await seedOlderTransfers(t, data.caller.integrationId);
    await data.receiver.close();
    origin = new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).origin;
    const [integrator, operator] = consoleSections({
      ...data,
      key: data.caller.key,
      integrationId: data.caller.integrationId,
    });
    sections = [
      {
        signIn: integrator.signIn,
        pages: [
          ...integrator.pages,
          { name: 'transfer (completed)', path: `/dashboard/transfers/${data.completed}` },
          { name: 'transfer (failed)', path: `/dashboard/transfers/${data.failed}` },
          { name: 'not found', path: '/dashboard/transfers/999999999', status: 404 },
        ],
      },
      {
        signIn: operator.signIn,
        pages: [
          ...operator.pages,
          { name: 'operator not found', path: '/dashboard/operator/nowhere', status: 404 },
        ],
      },
    ];
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  /**
   * Signs in through the section's form as a person does and checks each page at every width,
   * resizing the window around one load of the page.
   */
  async function checkSection(index: number) {
    const { signIn, pages } = sections[index]!;
    const context = await browser.newContext({
      baseURL: origin,
      viewport: { width: WIDTHS[0]!, height: 800 },
    });
    try {
      const page = await context.newPage();
      const violations: Violation[] = [];
      const unoutlined: string[] = [];
      const checkEveryWidth = async (name: string) => {
        for (const width of WIDTHS) {
          await page.setViewportSize({ width, height: 800 });
          violations.push(...(await check(page, axeSource, `${name} at ${width} px`)));
        }
        unoutlined.push(...(await focusWithoutOutline(page)).map((html) => `${name}: ${html}`));
      };
      await page.goto(signIn.path);
      await checkEveryWidth(`${signIn.name} (${signIn.path})`);
      await page.getByLabel(signIn.label).fill(signIn.secret);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`**${signIn.landing}`);
      for (const { name, path, status = 200 } of pages) {
        assert.equal((await page.goto(path))?.status(), status, path);
        await checkEveryWidth(`${name} (${path})`);
      }
      return { violations, unoutlined };
    } finally {
      await context.close();
    }
  }

  test('the integrator’s pages, its sign-in and a page not found break no rule, at desktop and phone widths', async () => {
    const { violations, unoutlined } = await checkSection(0);
    assert.equal(violations.length, 0, `axe found violations:\n\n${describeViolations(violations)}`);
    assert.deepEqual(unoutlined, [], 'elements whose keyboard focus draws no outline');
  });

  test('the operator’s pages, its sign-in and a page not found break no rule, at desktop and phone widths', async () => {
    const { violations, unoutlined } = await checkSection(1);
    assert.equal(violations.length, 0, `axe found violations:\n\n${describeViolations(violations)}`);
    assert.deepEqual(unoutlined, [], 'elements whose keyboard focus draws no outline');
  });
});
