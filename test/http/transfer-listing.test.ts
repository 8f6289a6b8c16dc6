import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { pino } from 'pino';
import { createRollUpWorker } from '../../src/workers/roll-ups.ts';
import { type Caller, callerFor, createTestApp, createTransfer, type TestApp } from '../helpers/app.ts';
import { seedTransfers } from '../helpers/seed-transfers.ts';

/** Settings that lift rate limits, for tests that make many calls (limits have their own tests). */
const UNLIMITED = { rateLimitMultiplier: 1000 };
/** Three days across two UTC midnights; four transfers share each creation instant. */
const START = new Date('2026-05-29T18:00:00.000Z');
const DAYS = 3;
const DAY_MS = 86_400_000;

interface Row {
  id: number;
  createdAt: Date;
  status: string;
  externalId: string | null;
  supportBundleId: string;
}

/** A filter as a query string, with the rows it matches. */
interface Filter {
  name: string;
  query: Record<string, string>;
  matches(row: Row): boolean;
}

/** Newest first: createdAt, then id, descending (decisions: listing). */
const newestFirst = (a: Row, b: Row) => b.createdAt.getTime() - a.createdAt.getTime() || b.id - a.id;

describe('GET /transfers, paged through', () => {
  let t: TestApp;
  let owner: Caller;
  let live: Caller;
  let stranger: Caller;

  /** The owner's transfers in `mode` as the database holds them now, newest first. */
  async function rowsOf(caller: Caller, mode: 'test' | 'live'): Promise<Row[]> {
    const { rows } = await t.database.db.query<{
      id: string;
      created_at: Date;
      status: string;
      external_id: string | null;
      support_bundle_id: string;
    }>(
      'SELECT id, created_at, status, external_id, support_bundle_id FROM transfers WHERE integration_id = $1 AND mode = $2',
      [caller.integrationId, mode],
    );
    return rows
      .map((row) => ({
        id: Number(row.id),
        createdAt: row.created_at,
        status: row.status,
        externalId: row.external_id,
        supportBundleId: row.support_bundle_id,
      }))
      .sort(newestFirst);
  }

  /** Every page of a query by cursor, `limit` at a time, checking each page's pagination. */
  async function walk(caller: Caller, query: Record<string, string>, limit: number, expectedTotal: number) {
    const pages: number[][] = [];
    let startingAfter: number | undefined;
    for (;;) {
      const params = new URLSearchParams({
        ...query,
        limit: String(limit),
        ...(startingAfter ? { startingAfter: String(startingAfter) } : {}),
      });
      const response = await caller.get(`/api/v1/transfers?${params}`);
      assert.equal(response.statusCode, 200, response.body);
      const { items, pagination } = response.json();
      const ids = items.map((item: { id: number }) => item.id);
      assert.deepEqual(pagination, { total: expectedTotal, limit, offset: 0, hasMore: pagination.hasMore });
      pages.push(ids);
      if (!pagination.hasMore) return pages;
      assert.equal(ids.length, limit, 'a page followed by more is full');
      startingAfter = ids.at(-1);
      assert.ok(pages.length <= expectedTotal, 'the walk ends');
    }
  }

  before(async () => {
    t = await createTestApp();
    owner = await t.newCaller('test', UNLIMITED);
    live = callerFor(t.app, owner.integrationId, await t.createKey(owner.integrationId, 'live'));
    stranger = await t.newCaller('test', UNLIMITED);
    const seed = { start: START, days: DAYS, perInstant: 4 };
    await seedTransfers(t.database.db, {
      integrationId: owner.integrationId,
      mode: 'test',
      count: 300,
      ...seed,
    });
    await seedTransfers(t.database.db, {
      integrationId: owner.integrationId,
      mode: 'live',
      count: 40,
      ...seed,
    });
    await seedTransfers(t.database.db, {
      integrationId: stranger.integrationId,
      mode: 'test',
      count: 40,
      ...seed,
    });
    // And a few through the API, inside the seeded days.
    for (let index = 0; index < 3; index++) await createTransfer(owner, `api-${index}`);
  });
  after(() => t.close());

  test('with every filter, the pages hold each match once, in order, ties at page boundaries included', async () => {
    const rows = await rowsOf(owner, 'test');
    const at = (index: number) => rows[index]!.createdAt.toISOString();
    const completedId = rows.find((row) => row.status === 'completed' && row.externalId)!;
    const filters: Filter[] = [
      { name: 'none', query: {}, matches: () => true },
      ...['completed', 'failed', 'expired', 'quote'].map((status) => ({
        name: `status ${status}`,
        query: { status },
        matches: (row: Row) => row.status === status,
      })),
      {
        name: 'fromDate (inclusive, at an instant several transfers share)',
        query: { fromDate: at(201) },
        matches: (row) => row.createdAt >= rows[201]!.createdAt,
      },
      {
        name: 'toDate (exclusive)',
        query: { toDate: at(61) },
        matches: (row) => row.createdAt < rows[61]!.createdAt,
      },
      {
        name: 'fromDate and toDate across a midnight',
        query: { fromDate: at(250), toDate: at(40) },
        matches: (row) => row.createdAt >= rows[250]!.createdAt && row.createdAt < rows[40]!.createdAt,
      },
      {
        name: 'status with a window',
        query: { status: 'completed', fromDate: at(250), toDate: at(40) },
        matches: (row) =>
          row.status === 'completed' &&
          row.createdAt >= rows[250]!.createdAt &&
          row.createdAt < rows[40]!.createdAt,
      },
      {
        name: 'externalId',
        query: { externalId: completedId.externalId! },
        matches: (row) => row.id === completedId.id,
      },
      {
        name: 'supportBundleId',
        query: { supportBundleId: completedId.supportBundleId },
        matches: (row) => row.id === completedId.id,
      },
      {
        name: 'externalId with a status it does not have',
        query: { externalId: completedId.externalId!, status: 'failed' },
        matches: () => false,
      },
    ];
    let tiesAcrossPages = 0;
    for (const filter of filters) {
      const expected = rows.filter(filter.matches).map((row) => row.id);
      const pages = await walk(owner, filter.query, 7, expected.length);
      assert.deepEqual(pages.flat(), expected, filter.name);
      const createdAt = new Map(rows.map((row) => [row.id, row.createdAt.getTime()]));
      for (let index = 1; index < pages.length; index++) {
        const [last, next] = [pages[index - 1]!.at(-1), pages[index]![0]];
        if (next !== undefined && createdAt.get(last!) === createdAt.get(next)) tiesAcrossPages++;
      }
    }
    assert.ok(tiesAcrossPages > 10, `pages broke between transfers of one instant ${tiesAcrossPages} times`);
  });

  test('each mode and integration pages through its own transfers only', async () => {
    for (const [caller, mode] of [
      [live, 'live'],
      [stranger, 'test'],
    ] as const) {
      const expected = (await rowsOf(caller, mode)).map((row) => row.id);
      assert.equal(expected.length, 40);
      assert.deepEqual((await walk(caller, {}, 9, 40)).flat(), expected);
    }
  });

  test('offset pages agree with the cursor', async () => {
    const expected = (await rowsOf(owner, 'test'))
      .filter((row) => row.status === 'completed')
      .map((row) => row.id);
    const seen: number[] = [];
    for (let offset = 0; offset < expected.length; offset += 11) {
      const response = await owner.get(`/api/v1/transfers?status=completed&limit=11&offset=${offset}`);
      const body = response.json();
      assert.deepEqual(body.pagination, {
        total: expected.length,
        limit: 11,
        offset,
        hasMore: offset + 11 < expected.length,
      });
      seen.push(...body.items.map((item: { id: number }) => item.id));
    }
    assert.deepEqual(seen, expected);
    // Both: the offset counts from the cursor.
    const both = await owner.get(
      `/api/v1/transfers?status=completed&limit=5&offset=3&startingAfter=${expected[10]}`,
    );
    assert.deepEqual(
      both.json().items.map((item: { id: number }) => item.id),
      expected.slice(14, 19),
    );
  });

  test('back from the last page (endingBefore, as the console pages back) the store gives the same pages in reverse', async () => {
    const expected = (await rowsOf(owner, 'test'))
      .filter((row) => row.status === 'completed')
      .map((row) => row.id);
    const ownerOf = { integrationId: owner.integrationId, mode: 'test' as const };
    const forward = await walk(owner, { status: 'completed' }, 7, expected.length);
    const backward: number[][] = [];
    let endingBefore = forward.at(-1)![0]!;
    for (;;) {
      const page = await t.store.transfers.list(
        ownerOf,
        { status: 'completed' },
        { limit: 7, offset: 0, endingBefore },
      );
      assert.ok(page, 'the cursor is the owner’s');
      backward.unshift(page.items.map((item) => item.id));
      if (!page.hasMore) break;
      endingBefore = page.items[0]!.id;
    }
    // The first page, reached backwards, is whatever is left before the second: at most a full page.
    assert.deepEqual(backward.flat(), expected.slice(0, -forward.at(-1)!.length));
    assert.deepEqual(backward.slice(1), forward.slice(1, -1));
    const strangers = await t.store.transfers.list(
      { integrationId: stranger.integrationId, mode: 'test' },
      {},
      { limit: 7, offset: 0, endingBefore: expected[3]! },
    );
    assert.equal(strangers, null, 'a cursor that is another integration’s transfer');
  });

  test('the walk goes on unchanged when transfers are created or change status meanwhile', async () => {
    const before = await rowsOf(owner, 'test');
    const completed = before.filter((row) => row.status === 'completed').map((row) => row.id);
    const first = (await owner.get('/api/v1/transfers?status=completed&limit=20')).json();
    assert.deepEqual(
      first.items.map((item: { id: number }) => item.id),
      completed.slice(0, 20),
    );
    // A newer transfer arrives, and the page's last transfer leaves the filter.
    t.clock.set(new Date(START.getTime() + DAYS * DAY_MS));
    const newer = await createTransfer(owner, 'newer-while-paging');
    await t.database.db.query(`UPDATE transfers SET status = 'refunded', phase = 'rescued' WHERE id = $1`, [
      completed[19],
    ]);
    const rest = (await walk(owner, { status: 'completed' }, 20, completed.length - 1)).flat();
    assert.deepEqual(rest.slice(20 - 1), completed.slice(20));
    const next = (
      await owner.get(`/api/v1/transfers?status=completed&limit=20&startingAfter=${completed[19]}`)
    ).json();
    assert.deepEqual(
      next.items.map((item: { id: number }) => item.id),
      completed.slice(20, 40),
    );
    const everything = (await owner.get('/api/v1/transfers?limit=1')).json();
    assert.deepEqual([everything.items[0].id, everything.pagination.total], [newer.id, before.length + 1]);
    await t.database.db.query(`UPDATE transfers SET status = 'completed', phase = 'settled' WHERE id = $1`, [
      completed[19],
    ]);
  });

  test('after the last transfer the page is empty; a cursor that is not one of your transfers is MH_030', async () => {
    const rows = await rowsOf(owner, 'test');
    const last = (await owner.get(`/api/v1/transfers?startingAfter=${rows.at(-1)!.id}`)).json();
    assert.deepEqual(last.items, []);
    assert.deepEqual(last.pagination, { total: rows.length, limit: 50, offset: 0, hasMore: false });
    const [strangers] = await rowsOf(stranger, 'test');
    const [lives] = await rowsOf(live, 'live');
    const unknown = Math.max(...rows.map((row) => row.id)) + 1_000;
    for (const id of [strangers!.id, lives!.id, unknown]) {
      const response = await owner.get(`/api/v1/transfers?status=completed&startingAfter=${id}`);
      assert.equal(response.statusCode, 404);
      assert.deepEqual(response.json().error, {
        code: 'MH_030',
        message: `No transfer with id ${id} to start after.`,
        param: 'startingAfter',
        requestId: response.headers['x-request-id'],
      });
    }
    for (const value of ['0', 'abc', '01', '-5']) {
      const response = await owner.get(`/api/v1/transfers?startingAfter=${value}`);
      assert.equal(response.statusCode, 400);
      assert.deepEqual(
        [response.json().error.code, response.json().error.param],
        ['MH_016', 'startingAfter'],
      );
    }
  });

  test('totals are exact for any status and window, before and after the roll-up, as statuses change', async () => {
    const instants = (await rowsOf(owner, 'test')).map((row) => row.createdAt.getTime());
    const midnights = Array.from(
      { length: DAYS + 2 },
      (_, day) => Math.ceil(START.getTime() / DAY_MS) * DAY_MS + (day - 1) * DAY_MS,
    );
    const instant = fc.option(
      fc.oneof(
        fc.constantFrom(...instants),
        fc
          .tuple(fc.constantFrom(...midnights), fc.constantFrom(-1, 0, 1))
          .map(([midnight, ms]) => midnight + ms),
        fc.integer({ min: START.getTime() - DAY_MS, max: START.getTime() + (DAYS + 1) * DAY_MS }),
      ),
      { nil: undefined },
    );
    const status = fc.option(
      fc.constantFrom('completed', 'failed', 'expired', 'quote', 'refunded', 'processing'),
      {
        nil: undefined,
      },
    );
    const check = async () => {
      const rows = await rowsOf(owner, 'test');
      await fc.assert(
        fc.asyncProperty(status, instant, instant, async (wanted, from, to) => {
          const expected = rows.filter(
            (row) =>
              (wanted === undefined || row.status === wanted) &&
              (from === undefined || row.createdAt.getTime() >= from) &&
              (to === undefined || row.createdAt.getTime() < to),
          ).length;
          const params = new URLSearchParams({
            limit: '1',
            ...(wanted ? { status: wanted } : {}),
            ...(from === undefined ? {} : { fromDate: new Date(from).toISOString() }),
            ...(to === undefined ? {} : { toDate: new Date(to).toISOString() }),
          });
          const response = await owner.get(`/api/v1/transfers?${params}`);
          assert.equal(response.statusCode, 200, response.body);
          assert.equal(response.json().pagination.total, expected);
        }),
        { numRuns: 60 },
      );
    };
    const pending = async () =>
      Number(
        (await t.database.db.query<{ n: string }>('SELECT count(*) AS n FROM transfer_total_changes'))
          .rows[0]!.n,
      );

    // The worker folds the changes in batches until none is left, and says how many it folded.
    const worker = createRollUpWorker({
      rollUps: { 'transfer totals': t.store.transferTotals.rollUp },
      log: pino({ level: 'silent' }),
      batchSize: 100,
    });
    const waiting = await pending();
    assert.ok(waiting > 300, 'the seeded transfers wait to be rolled up');
    await check();
    assert.equal(await worker.runOnce(), waiting);
    assert.equal(await pending(), 0);
    await check();
    // Statuses move (quotes expire, a day of completed ones is refunded), to be rolled up later.
    await t.database.db.query(
      `UPDATE transfers SET status = 'expired', phase = 'expired' WHERE integration_id = $1 AND status = 'quote'`,
      [owner.integrationId],
    );
    await t.database.db.query(
      `UPDATE transfers SET status = 'refunded', phase = 'rescued'
        WHERE integration_id = $1 AND status = 'completed' AND created_at < $2`,
      [owner.integrationId, new Date(Math.ceil(START.getTime() / DAY_MS) * DAY_MS)],
    );
    await check();
    assert.ok((await worker.runOnce()) > 0);
    await check();
    const { rows: emptied } = await t.database.db.query(
      `SELECT * FROM transfer_day_totals WHERE integration_id = $1 AND mode = 'test' AND status = 'quote'`,
      [owner.integrationId],
    );
    assert.deepEqual(emptied, [], 'days left without a transfer in a status are deleted');
  });

  test('concurrent creates and roll-ups keep the totals exact', async () => {
    const caller = await t.newCaller('test', UNLIMITED);
    await seedTransfers(t.database.db, {
      integrationId: caller.integrationId,
      mode: 'test',
      count: 50,
      start: START,
      days: 1,
    });
    await Promise.all([
      ...Array.from({ length: 12 }, (_, index) => createTransfer(caller, `concurrent-${index}`)),
      ...Array.from({ length: 4 }, () => t.store.transferTotals.rollUp(7)),
    ]);
    const expected = (await rowsOf(caller, 'test')).length;
    assert.equal(expected, 62);
    for (let round = 0; round < 2; round++) {
      assert.equal((await caller.get('/api/v1/transfers?limit=1')).json().pagination.total, expected);
      assert.equal(
        (await caller.get(`/api/v1/transfers?limit=1&fromDate=${START.toISOString()}`)).json().pagination
          .total,
        expected,
      );
      while ((await t.store.transferTotals.rollUp(1_000)) > 0);
    }
  });
});
