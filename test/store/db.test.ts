import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

describe('statements on a PostgreSQL server', () => {
  let database: TestDatabase;
  before(async () => {
    // One connection, so that every query below runs on the same session.
    database = await createTestDatabase({ poolSize: 1 });
    await database.db.exec(`CREATE TABLE items (id int PRIMARY KEY, amount numeric(20,0), big bigint);
      INSERT INTO items VALUES (1, 18446744073709551615, 9007199254740993);`);
  });
  after(() => database.drop());

  const readItem = async () => (await database.db.query('SELECT * FROM items WHERE id = $1', [1])).rows[0];

  test('numeric and bigint columns arrive as exact strings, never as JavaScript numbers', async () => {
    assert.deepEqual(await readItem(), { id: 1, amount: '18446744073709551615', big: '9007199254740993' });
  });

  test('a table that changed shape while the process runs (a newer migration) is read as it now is', async () => {
    await database.db.exec("ALTER TABLE items ADD COLUMN note text NOT NULL DEFAULT 'added'");
    assert.deepEqual(await readItem(), {
      id: 1,
      amount: '18446744073709551615',
      big: '9007199254740993',
      note: 'added',
    });
  });
});
