// The lateness of recorded hops on the keeper's page, from the per-minute roll-up that the hops the
// keeper's store appends as it records them are folded into (src/store/hop-lateness.ts): counts and
// worst exact, p50 and p99 as `percentile_cont` over the hops' lateness (exact while a bucket holds
// two hops or fewer, within 4.5% always), windows by whole minutes; the same figures before and
// after the roll-up.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, beforeEach, describe, test } from 'node:test';
import { createHopStore } from '../../src/store/hops.ts';
import { createKeeperHealthStore } from '../../src/store/keeper-health.ts';
import { createSecretBox } from '../../src/store/secret-box.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { seedTransfers } from '../helpers/seed-transfers.ts';

// Mid-minute, so that each window starts in a minute part of which it leaves out.
const NOW = new Date('2026-06-01T12:00:40.000Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('hop lateness on the keeper’s page', () => {
  let database: TestDatabase;
  let routes: number[] = [];
  const keeperHealth = () => createKeeperHealthStore(database.db);
  const readNow = () => keeperHealth().read({ chainNow: BigInt(NOW.getTime() / 1000), now: NOW, limit: 5 });
  /** Folds every recorded hop, a few at a time (so that later batches meet rows of earlier ones). */
  const rollUp = async () => {
    while ((await keeperHealth().rollUpLateness(7)) > 0);
  };
  /** The page's figures, read before and after the roll-up folded every recorded hop: the same. */
  const read = async () => {
    const unfolded = await readNow();
    await rollUp();
    const folded = await readNow();
    assert.deepEqual(folded.lateness, unfolded.lateness);
    return folded;
  };

  before(async () => {
    database = await createTestDatabase({ poolSize: 4 });
    const { rows } = await database.db.query<{ id: string }>(
      `INSERT INTO integrations (name, created_at, updated_at) VALUES ('lateness', $1, $1) RETURNING id`,
      [NOW],
    );
    await seedTransfers(database.db, {
      integrationId: Number(rows[0]!.id),
      mode: 'test',
      count: 2_000,
      start: new Date(NOW.getTime() - 2 * 24 * HOUR),
      days: 1,
    });
  });
  after(() => database?.drop());
  beforeEach(async () => {
    // Every route in flight, its first hop next; no hop counted yet.
    const { rows } = await database.db.query<{ id: string }>(
      `UPDATE transfers SET status = 'processing', phase = 'executing', hops_completed = 0, interval_seconds = 15
       RETURNING id`,
    );
    routes = rows.map((row) => Number(row.id));
    await database.db.query('DELETE FROM hop_lateness_minutes');
    await database.db.query('DELETE FROM hop_lateness_recorded');
  });

  /** p50 and p99 of the values as PostgreSQL's `percentile_cont` computes them. */
  const percentileCont = async (values: readonly number[]) =>
    (
      await database.db.query<{ p50: number; p99: number }>(
        `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY v) AS p50,
                percentile_cont(0.99) WITHIN GROUP (ORDER BY v) AS p99
           FROM unnest($1::float8[]) v`,
        [values],
      )
    ).rows[0]!;

  /**
   * Records the first hop of a route of its own `late` seconds (to the millisecond) after its due
   * time, a whole second, recorded about `around`; answers the route and what recording it answered.
   */
  const recordHop = async (late: number, around = new Date(NOW.getTime() - 10 * MINUTE)) => {
    const hops = createHopStore(database.db, createSecretBox(randomBytes(32)));
    const id = routes.pop()!;
    const due = Math.floor(around.getTime() / 1000 - late);
    const recordedAt = new Date(due * 1000 + Math.round(late * 1000));
    await database.db.query('UPDATE transfers SET first_release_at = $2 WHERE id = $1', [id, due]);
    const then = { nextDueAt: BigInt(due + 15) };
    const recorded = await database.db.transaction((tx) =>
      hops.recordHop(tx, id, { step: 0, signature: `sig-${id}`, feesPaid: 5000n, then, now: recordedAt }),
    );
    return { id, recorded };
  };

  test('99 hops 0.5 s late and one 30 s late: p50 0.5 s, p99 0.5 s plus 1% of the way to 30 s, worst 30 s', async () => {
    for (let index = 0; index < 99; index++) await recordHop(0.5);
    await recordHop(30);
    const { lateness } = await read();
    const values = [...Array.from({ length: 99 }, () => 0.5), 30];
    const expected = { hops: 100, ...(await percentileCont(values)), max: 30 };
    assert.deepEqual(lateness, { lastHour: expected, lastDay: expected });
    assert.deepEqual([expected.p50, expected.p99.toFixed(6)], [0.5, '0.795000']);
  });

  test('hops in buckets of their own: p50 and p99 exactly as percentile_cont computes them', async () => {
    // Each 10% later than the last: no two share a bucket (4.4% wide).
    const values = Array.from({ length: 60 }, (_, index) => Math.round(1000 * 0.05 * 1.1 ** index) / 1000);
    for (const value of values) await recordHop(value);
    const { lastDay } = (await read()).lateness;
    assert.deepEqual(lastDay, { hops: 60, ...(await percentileCont(values)), max: Math.max(...values) });
  });

  test('many hops to a bucket: p50 and p99 within 4.5% of percentile_cont; hops and worst exact', async () => {
    // 500 hops from 0.007 s to 9.5 s, denser at the low end, as lateness runs.
    const values = Array.from(
      { length: 500 },
      (_, index) => Math.round(9500 * (index / 499) ** 3 + 7) / 1000,
    );
    for (const value of values) await recordHop(value);
    const { lastDay } = (await read()).lateness;
    assert.equal(lastDay.hops, 500);
    assert.equal(lastDay.max, 9.507);
    const exactly = await percentileCont(values);
    for (const q of ['p50', 'p99'] as const) {
      const exact = exactly[q];
      assert.ok(Math.abs(lastDay[q]! - exact) <= 0.045 * exact, `${q} ${lastDay[q]} against ${exact}`);
    }
    const { rows: buckets } = await database.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM hop_lateness_minutes',
    );
    assert.ok(buckets[0]!.n < 250, `${buckets[0]!.n} rows for 500 hops`);
  });

  test('a hop recorded before its due time by the service’s clock counts as on time; a hop recorded again is not counted again', async () => {
    await recordHop(-2);
    const { id } = await recordHop(4);
    const hops = createHopStore(database.db, createSecretBox(randomBytes(32)));
    const then = { nextDueAt: 0n };
    const again = await database.db.transaction((tx) =>
      hops.recordHop(tx, id, { step: 0, signature: 'again', feesPaid: 0n, then, now: NOW }),
    );
    assert.equal(again, null);
    const { lastDay } = (await read()).lateness;
    assert.deepEqual(lastDay, { hops: 2, ...(await percentileCont([0, 4])), max: 4 });
    assert.deepEqual([lastDay.p50, lastDay.p99], [2, 0.99 * 4]);
  });

  test('windows by whole minutes: the last hour counts the whole minute it starts in, the last day likewise; nothing else', async () => {
    const at = (ms: number) => new Date(NOW.getTime() - ms);
    await recordHop(1, at(5 * MINUTE));
    await recordHop(2, at(HOUR + 30_000)); // 11:00:10, in the minute the hour starts in
    await recordHop(3, at(HOUR + 61_000)); // 10:59:39, the minute before
    await recordHop(4, at(24 * HOUR + 30_000)); // the day before at 12:00:10, in the day's first minute
    await recordHop(5, at(24 * HOUR + 61_000));
    const { lateness } = await read();
    assert.deepEqual(lateness.lastHour, { hops: 2, ...(await percentileCont([1, 2])), max: 2 });
    assert.deepEqual(lateness.lastDay, { hops: 4, ...(await percentileCont([1, 2, 3, 4])), max: 4 });
  });

  test('recording a hop appends it; roll-ups at once fold each hop once, into a row per minute and bucket', async () => {
    for (let index = 0; index < 60; index++) await recordHop(0.5 + (index % 3));
    const count = async (table: string) =>
      (await database.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;
    assert.deepEqual([await count('hop_lateness_recorded'), await count('hop_lateness_minutes')], [60, 0]);
    // One folds at a time; the others find its lock taken and fold nothing.
    const folded = await Promise.all(Array.from({ length: 4 }, () => keeperHealth().rollUpLateness(100)));
    assert.deepEqual(
      folded.sort((a, b) => b - a),
      [60, 0, 0, 0],
    );
    const { rows } = await database.db.query<{ hops: number; least: number; most: number }>(
      'SELECT hops, least_seconds AS least, most_seconds AS most FROM hop_lateness_minutes ORDER BY bucket',
    );
    assert.deepEqual(rows, [
      { hops: 20, least: 0.5, most: 0.5 },
      { hops: 20, least: 1.5, most: 1.5 },
      { hops: 20, least: 2.5, most: 2.5 },
    ]);
    assert.equal(await count('hop_lateness_recorded'), 0);
    assert.equal((await readNow()).lateness.lastDay.hops, 60);
  });

  test('no hop: no figures', async () => {
    const empty = { hops: 0, p50: null, p99: null, max: null };
    assert.deepEqual((await read()).lateness, { lastHour: empty, lastDay: empty });
  });
});
