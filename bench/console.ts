import { createTestApp } from '../test/helpers/app.ts';
import { launchBrowser } from '../test/helpers/browser.ts';
import { makeConsoleData, seedOlderTransfers } from '../test/helpers/console-data.ts';
import {
  consoleSections,
  type Fetched,
  type PageLoad,
  type PageWeight,
  weighConsole,
} from '../test/helpers/page-weight.ts';
import { markdownTable } from './lib/load.ts';

/**
 * What each page of the console weighs in Chromium, as DevTools counts it (bytes transferred:
 * headers and bodies as they came over the wire, compressed where the server compressed them),
 * how many requests it makes and how long it takes to load on this machine: first with nothing
 * cached, then again with what an earlier load of it cached. The
 * app is the real one on a port of its own, with the data of the console's pictures
 * (test/helpers/console-data.ts) and a full first page of transfers; its budget is held by
 * test/console/weight.test.ts.
 *
 *   npm run bench -- console    (BENCH_CONSOLE_RUNS, default 3: each load time is the median)
 */
const RUNS = Number(process.env.BENCH_CONSOLE_RUNS ?? 3);
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error('BENCH_CONSOLE_RUNS takes integers of 1 or more');

const t = await createTestApp();
const browser = await launchBrowser();
try {
  const data = await makeConsoleData(t);
  await seedOlderTransfers(t, data.caller.integrationId);
  const origin = new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).origin;
  const sections = consoleSections({
    ...data,
    key: data.caller.key,
    integrationId: data.caller.integrationId,
  });
  const runs: PageWeight[][] = [];
  for (let run = 0; run < RUNS; run++) runs.push(await weighConsole(browser, origin, sections));
  await data.receiver.close();

  const kb = (bytes: number) => (bytes / 1024).toFixed(1);
  const median = (values: number[]) =>
    [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;
  const html = (load: PageLoad) => load.fetched.filter((fetched) => fetched.type === 'Document');
  const rows = runs[0]!.map(({ page, first, warm = first }, index) => [
    `${page.name} (\`${page.path.replace(/\/\d+$/, '/{id}')}\`)`,
    first.requests,
    kb(first.bytes),
    `${kb(first.htmlBytes)} (${kb(html(first).reduce((sum, fetched) => sum + fetched.decodedBytes, 0))})`,
    median(runs.map((run) => run[index]!.first.loadMs)).toFixed(0),
    `${warm.requests} (+${warm.cached} cached)`,
    kb(warm.bytes),
    median(runs.map((run) => run[index]!.warm!.loadMs)).toFixed(0),
  ]);
  // The pages share their assets: each once, as its first load fetched it.
  const assets = new Map<string, Fetched>();
  for (const { first } of runs[0]!) {
    for (const fetched of first.fetched) {
      if (fetched.type !== 'Document' && !assets.has(fetched.url)) assets.set(fetched.url, fetched);
    }
  }
  process.stdout.write(
    `${RUNS} runs; KB are 1024 bytes transferred (headers included); ms are the median of the runs.\n\n` +
      `${markdownTable(
        [
          'page',
          'first load: requests',
          'KB',
          'of which HTML KB (decoded)',
          'ms',
          'again: requests',
          'KB',
          'ms',
        ],
        rows,
      )}\n\n` +
      `The assets the first loads fetch:\n\n${markdownTable(
        ['asset', 'type', 'KB transferred', 'KB decoded', 'encoding'],
        [...assets.values()].map((fetched) => [
          `\`${new URL(fetched.url).pathname}\``,
          fetched.type,
          kb(fetched.bytes),
          kb(fetched.decodedBytes),
          fetched.encoding ?? 'none',
        ]),
      )}\n`,
  );
} finally {
  await browser.close();
  await t.close();
}
