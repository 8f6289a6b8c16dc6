import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createNotifiedCache } from '../../src/store/notified-cache.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

/** Polls until `condition` holds (effects of asynchronous notifications), failing after 3 s. */
async function eventually(condition: () => Promise<boolean> | boolean) {
  const deadline = Date.now() + 3_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not reached within 3 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('a cache kept fresh by NOTIFY', () => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase();
    await database.db.exec(`CREATE TABLE items (id int PRIMARY KEY, value text);
      INSERT INTO items VALUES (1, 'first');
      CREATE FUNCTION items_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_notify('items_changed', OLD.id::text); RETURN NULL; END $$;
      CREATE TRIGGER items_changed AFTER UPDATE ON items FOR EACH ROW EXECUTE FUNCTION items_changed();`);
  });
  after(() => database.drop());

  const readItem = (loads: { count: number }) => async () => {
    loads.count++;
    const { rows } = await database.db.query<{ value: string }>('SELECT value FROM items WHERE id = 1');
    return rows[0]?.value ?? null;
  };

  test('serves from memory until a change in any connection evicts the entry', async () => {
    const cache = createNotifiedCache<number, string>({ ttlMs: 60_000, maxEntries: 10 });
    const stop = await cache.follow(database.db, 'items_changed', (payload) => Number(payload));
    try {
      const loads = { count: 0 };
      assert.equal(await cache.read(1, readItem(loads)), 'first');
      assert.equal(await cache.read(1, readItem(loads)), 'first');
      assert.equal(loads.count, 1, 'the second read came from memory');
      await database.db.query(`UPDATE items SET value = 'second' WHERE id = 1`);
      await eventually(async () => (await cache.read(1, readItem(loads))) === 'second');
    } finally {
      await stop();
    }
  });

  test('a read that overlapped an eviction is not kept', async () => {
    const cache = createNotifiedCache<number, string>({ ttlMs: 60_000, maxEntries: 10 });
    const stop = await cache.follow(database.db, 'items_changed', (payload) => Number(payload));
    try {
      const loads = { count: 0 };
      const slow = cache.read(1, async () => {
        const value = await readItem(loads)();
        cache.evict(1); // a change lands while this read is in flight
        return value;
      });
      await slow;
      await cache.read(1, readItem(loads));
      assert.equal(loads.count, 2, 'the overlapped value was not cached');
    } finally {
      await stop();
    }
  });

  test('while the notification connection is down the cache is bypassed, then it resumes', async () => {
    const cache = createNotifiedCache<number, string>({ ttlMs: 60_000, maxEntries: 10 });
    const stop = await cache.follow(database.db, 'items_changed', (payload) => Number(payload));
    try {
      const loads = { count: 0 };
      await cache.read(1, readItem(loads));
      await cache.read(1, readItem(loads));
      assert.equal(loads.count, 1);
      await database.db.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`,
      );
      await eventually(async () => {
        const before = loads.count;
        await cache.read(1, readItem(loads));
        return loads.count > before;
      });
      // Resubscribed after the retry delay: reads are cached again.
      await eventually(async () => {
        await cache.read(1, readItem(loads));
        const before = loads.count;
        await cache.read(1, readItem(loads));
        return loads.count === before;
      });
    } finally {
      await stop();
    }
  });
});
