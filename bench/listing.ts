import { createTestApp } from '../test/helpers/app.ts';
import { seedTransfers } from '../test/helpers/seed-transfers.ts';
import { markdownTable } from './lib/load.ts';

/**
 * The transfer listing at 100,000 transfers of one integration: the server time of a page of 50
 * (`GET /transfers`, with no filter, each filter, and pages reached by cursor) against the time of
 * `GET /transfers/{id}`, in process through `app.inject` (the app as the service builds it, with
 * auth, rate limits and response validation; no network). The transfers are inserted straight
 * into PostgreSQL in one statement (test/helpers/seed-transfers.ts: a year of them, mostly
 * completed), their totals rolled up and the table vacuumed, as a running service's would be.
 * Scenarios run in interleaved rounds; each ratio is the median of its per-round ratios of p50s,
 * so that a noisy machine skews both sides of a ratio alike.
 *
 *   npm run bench -- listing    (BENCH_TRANSFERS, default 100000; BENCH_ROUNDS, default 5;
 *                                BENCH_ITERATIONS per scenario and round, default 200)
 */
const TRANSFERS = Number(process.env.BENCH_TRANSFERS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 200);
const START = new Date('2025-06-01T00:00:00.000Z');
const DAYS = 365;
const DAY_MS = 86_400_000;
const BY_ID = 'GET /transfers/{id}';

const t = await createTestApp({ poolSize: 4 });
try {
  const caller = await t.newCaller('test', { rateLimitMultiplier: 100_000 });
  const db = t.database.db;
  let started = performance.now();
  await seedTransfers(db, {
    integrationId: caller.integrationId,
    mode: 'test',
    count: TRANSFERS,
    start: START,
    days: DAYS,
  });
  const seedSeconds = (performance.now() - started) / 1000;
  started = performance.now();
  while ((await t.store.transferTotals.rollUp(10_000)) > 0);
  const rollUpSeconds = (performance.now() - started) / 1000;
  await db.exec('VACUUM ANALYZE transfers, transfer_totals, transfer_day_totals, transfer_total_changes');

  const { rows } = await db.query<{ id: string; external_id: string | null; support_bundle_id: string }>(
    `SELECT id, external_id, support_bundle_id FROM transfers WHERE integration_id = $1 AND mode = 'test'
      ORDER BY created_at DESC, id DESC`,
    [caller.integrationId],
  );
  const ids = rows.map((row) => row.id);
  const named = rows.find((row, index) => index >= ids.length / 2 && row.external_id)!;
  const day = (offset: number) => new Date(START.getTime() + offset * DAY_MS).toISOString();
  // Ids spread over the table, so that reads by id touch it all as the listing does.
  const sampled = Array.from({ length: 997 }, (_, index) => ids[(index * 7_919) % ids.length]!);
  const list = (query: string) => `/api/v1/transfers?limit=50${query}`;
  const scenarios: { name: string; urls: () => string }[] = [
    { name: BY_ID, urls: cycle(sampled.map((id) => `/api/v1/transfers/${id}`)) },
    { name: 'no filter', urls: cycle([list('')]) },
    { name: 'status=completed (80%)', urls: cycle([list('&status=completed')]) },
    { name: 'status=failed (3%)', urls: cycle([list('&status=failed')]) },
    { name: 'fromDate (the last 30 days)', urls: cycle([list(`&fromDate=${day(DAYS - 30)}`)]) },
    { name: 'toDate (before the last 90 days)', urls: cycle([list(`&toDate=${day(DAYS - 90)}`)]) },
    {
      name: 'fromDate and toDate (a month, mid-hour ends)',
      urls: cycle([list(`&fromDate=${day(120.4)}&toDate=${day(150.7)}`)]),
    },
    {
      name: 'status=failed in that month',
      urls: cycle([list(`&status=failed&fromDate=${day(120.4)}&toDate=${day(150.7)}`)]),
    },
    { name: 'externalId', urls: cycle([list(`&externalId=${named.external_id}`)]) },
    { name: 'supportBundleId', urls: cycle([list(`&supportBundleId=${named.support_bundle_id}`)]) },
    {
      name: 'a middle page by cursor (startingAfter)',
      urls: cycle([list(`&startingAfter=${ids[ids.length / 2 - 1]}`)]),
    },
    { name: 'last page by cursor (startingAfter)', urls: cycle([list(`&startingAfter=${ids.at(-51)}`)]) },
    { name: 'last page by offset (reference)', urls: cycle([list(`&offset=${ids.length - 50}`)]) },
  ];

  /** The server time of each request of one run, in milliseconds. */
  const run = async (urls: () => string, iterations: number) => {
    const times: number[] = [];
    for (let index = 0; index < iterations; index++) {
      const url = urls();
      const began = performance.now();
      const response = await caller.get(url);
      times.push(performance.now() - began);
      if (response.statusCode !== 200) throw new Error(`${url}: ${response.statusCode} ${response.body}`);
    }
    return times;
  };
  for (const scenario of scenarios) await run(scenario.urls, 20);
  const samples = new Map(scenarios.map((scenario) => [scenario.name, [] as number[][]]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const scenario of scenarios) samples.get(scenario.name)!.push(await run(scenario.urls, ITERATIONS));
  }

  const byIdRounds = samples.get(BY_ID)!.map((times) => percentile(times, 50));
  const table = scenarios.map(({ name }) => {
    const rounds = samples.get(name)!;
    const all = rounds.flat();
    const ratio = median(rounds.map((times, round) => percentile(times, 50) / byIdRounds[round]!));
    const target = name === BY_ID ? '' : name.endsWith('(reference)') ? '(reference)' : '≤ 5x';
    return [
      name === BY_ID ? name : `GET /transfers, ${name}`,
      percentile(all, 50).toFixed(2),
      percentile(all, 99).toFixed(2),
      name === BY_ID ? '1x' : `${ratio.toFixed(1)}x`,
      target,
    ];
  });
  process.stdout.write(
    `${TRANSFERS} transfers seeded in ${seedSeconds.toFixed(1)} s, totals rolled up in ${rollUpSeconds.toFixed(1)} s; ` +
      `${ROUNDS} rounds of ${ITERATIONS} requests per scenario, one at a time.\n\n` +
      `${markdownTable(['request (page of 50)', 'p50 ms', 'p99 ms', 'p50 / get by id', 'target'], table)}\n`,
  );
} finally {
  await t.close();
}

/** The items in turn, forever. */
function cycle(items: string[]): () => string {
  let next = 0;
  return () => items[next++ % items.length]!;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

function median(values: number[]): number {
  return percentile(values, 50);
}
