// What the console's pages weigh in Chromium, as DevTools counts it (bytes "transferred": each
// response's headers and body as they came over the wire, compressed when the server compressed
// them), for `npm run bench -- console` and the budget test (test/console/weight.test.ts).
import type { Browser, Page } from 'playwright-core';
import { ADMIN_TOKEN } from './app.ts';

/** One response of a page load. */
export interface Fetched {
  url: string;
  /** What the browser fetched it as: Document, Stylesheet, Script, ... */
  type: string;
  status: number;
  /** Bytes received over the wire, headers included; 0 when served from the browser's cache. */
  bytes: number;
  /** The body's bytes once decoded (as the server had them before compressing). */
  decodedBytes: number;
  /** Its Content-Encoding (br, gzip), if any. */
  encoding: string | undefined;
  fromCache: boolean;
}

/** What loading a page cost, from navigation to its load event. */
export interface PageLoad {
  /** Requests that went over the network (not answered from the browser's cache). */
  requests: number;
  /** Bytes received for them over the wire, headers included. */
  bytes: number;
  /** Of which the HTML document's. */
  htmlBytes: number;
  /** Requests the browser's cache answered. */
  cached: number;
  /** From navigation start to the end of the load event, as the page's navigation timing says. */
  loadMs: number;
  fetched: Fetched[];
}

/** A page of the console: its name in reports and budgets, and its path. */
export interface ConsolePage {
  name: string;
  path: string;
}

/** A part of the console: its sign-in form, what opens it, and the pages it then shows. */
export interface ConsoleSection {
  signIn: ConsolePage & { label: string; secret: string; landing: string };
  pages: readonly ConsolePage[];
}

/** Every page of the console by section, showing the data of test/helpers/console-data.ts. */
export function consoleSections(data: {
  key: string;
  endpointId: number;
  flying: string | number;
  integrationId: number;
}) {
  return [
    {
      signIn: {
        name: 'sign-in',
        path: '/dashboard/sign-in',
        label: 'API key',
        secret: data.key,
        landing: '/dashboard/transfers',
      },
      pages: [
        { name: 'transfers', path: '/dashboard/transfers' },
        { name: 'transfer (in flight)', path: `/dashboard/transfers/${data.flying}` },
        { name: 'webhooks', path: '/dashboard/webhooks' },
        { name: 'webhook', path: `/dashboard/webhooks/${data.endpointId}` },
        { name: 'usage', path: '/dashboard/usage' },
        { name: 'earnings', path: '/dashboard/earnings' },
      ],
    },
    {
      signIn: {
        name: 'operator sign-in',
        path: '/dashboard/operator/sign-in',
        label: 'Admin token',
        secret: ADMIN_TOKEN,
        landing: '/dashboard/operator/integrations',
      },
      pages: [
        { name: 'operator integrations', path: '/dashboard/operator/integrations' },
        { name: 'operator integration', path: `/dashboard/operator/integrations/${data.integrationId}` },
        { name: 'operator platform', path: '/dashboard/operator/platform' },
        { name: 'operator keeper', path: '/dashboard/operator/keeper' },
      ],
    },
  ] as const satisfies readonly ConsoleSection[];
}

type Section = ReturnType<typeof consoleSections>[number];
/** The name of a page of the console. */
export type ConsolePageName = Section['signIn']['name'] | Section['pages'][number]['name'];

/** Records what each page load of `page` fetches, through the Chrome DevTools Protocol. */
async function meter(page: Page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  let recording: Map<string, Fetched & { done: boolean }> | undefined;
  cdp.on('Network.requestWillBeSent', (event) => {
    // A data: URL (Chromium's own icon of a date field) never leaves the browser.
    if (event.request.url.startsWith('data:')) return;
    recording?.set(event.requestId, {
      url: event.request.url,
      type: event.type ?? 'Other',
      status: 0,
      bytes: 0,
      decodedBytes: 0,
      encoding: undefined,
      fromCache: false,
      done: false,
    });
  });
  cdp.on('Network.requestServedFromCache', (event) => {
    const fetched = recording?.get(event.requestId);
    if (fetched) fetched.fromCache = true;
  });
  cdp.on('Network.responseReceived', (event) => {
    const fetched = recording?.get(event.requestId);
    if (!fetched) return;
    fetched.status = event.response.status;
    fetched.fromCache ||= event.response.fromDiskCache === true || event.response.fromPrefetchCache === true;
    const encoding = Object.entries(event.response.headers).find(
      ([name]) => name.toLowerCase() === 'content-encoding',
    );
    fetched.encoding = encoding?.[1];
  });
  cdp.on('Network.dataReceived', (event) => {
    const fetched = recording?.get(event.requestId);
    if (fetched) fetched.decodedBytes += event.dataLength;
  });
  const finish = (requestId: string, bytes: number) => {
    const fetched = recording?.get(requestId);
    if (!fetched) return;
    fetched.bytes = fetched.fromCache ? 0 : bytes;
    fetched.done = true;
  };
  cdp.on('Network.loadingFinished', (event) => finish(event.requestId, event.encodedDataLength));
  cdp.on('Network.loadingFailed', (event) => finish(event.requestId, 0));

  return {
    /**
     * Loads `path` and answers what it cost, up to its load event: with `cache` off as a first
     * visit does (DevTools' "Disable cache"), with it on answered by what earlier loads cached.
     */
    async load(path: string, { cache }: { cache: boolean }): Promise<PageLoad> {
      await cdp.send('Network.setCacheDisabled', { cacheDisabled: !cache });
      // Away first: a page refreshing itself would send a request while the next one loads.
      await page.goto('about:blank');
      const current = new Map<string, Fetched & { done: boolean }>();
      recording = current;
      const response = await page.goto(path);
      if (response?.status() !== 200) throw new Error(`${path}: ${response?.status()}`);
      const loadMs = await page.evaluate(
        () =>
          (
            performance as unknown as { getEntriesByType(type: string): { duration: number }[] }
          ).getEntriesByType('navigation')[0]?.duration ?? Number.NaN,
      );
      // The protocol's events travel apart from the page's: the last may come just after the load.
      for (let wait = 0; [...current.values()].some((fetched) => !fetched.done) && wait < 50; wait++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      recording = undefined;
      const fetched = [...current.values()].map(({ done: _, ...rest }) => rest);
      const network = fetched.filter((item) => !item.fromCache);
      return {
        requests: network.length,
        bytes: network.reduce((sum, item) => sum + item.bytes, 0),
        htmlBytes: network
          .filter((item) => item.type === 'Document')
          .reduce((sum, item) => sum + item.bytes, 0),
        cached: fetched.length - network.length,
        loadMs,
        fetched,
      };
    },
  };
}

/** A page loaded first (nothing cached) and, when asked for, again with what that load cached. */
export interface PageWeight<Name extends string = string> {
  page: ConsolePage & { name: Name };
  first: PageLoad;
  warm: PageLoad | undefined;
}

/**
 * Loads each page of each section in Chromium, in a browser context of the section's own: its
 * sign-in page, then, signed in through its form as a person is, each of its pages. Each first
 * with nothing cached, then (`again`, the default) with the cache on: loaded once to fill it, and
 * once more, as a person coming back to it has it (a normal navigation, not a reload).
 */
export async function weighConsole<Name extends string>(
  browser: Browser,
  origin: string,
  sections: readonly {
    signIn: ConsoleSection['signIn'] & { name: Name };
    pages: readonly (ConsolePage & { name: Name })[];
  }[],
  { again = true }: { again?: boolean } = {},
): Promise<PageWeight<Name>[]> {
  const weights: PageWeight<Name>[] = [];
  for (const { signIn, pages } of sections) {
    const context = await browser.newContext({ baseURL: origin, viewport: { width: 1280, height: 800 } });
    try {
      const page = await context.newPage();
      const loads = await meter(page);
      const weigh = async (consolePage: ConsolePage & { name: Name }) => {
        const first = await loads.load(consolePage.path, { cache: false });
        let warm: PageLoad | undefined;
        if (again) {
          await loads.load(consolePage.path, { cache: true });
          warm = await loads.load(consolePage.path, { cache: true });
        }
        weights.push({ page: consolePage, first, warm });
      };
      await weigh(signIn);
      await page.goto(signIn.path);
      await page.getByLabel(signIn.label).fill(signIn.secret);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`**${signIn.landing}`);
      for (const consolePage of pages) await weigh(consolePage);
    } finally {
      await context.close();
    }
  }
  return weights;
}
