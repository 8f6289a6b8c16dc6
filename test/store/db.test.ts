import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

describe('statements on a PostgreSQL server', () => {
  let database: TestDatabase;
  before(async () => {
    // One connection, so that every query below runs on the session that prepared the statements.
    database = await createTestDatabase({ poolSize: 1 });
    await database.db.exec(`CREATE TABLE items (id int PRIMARY KEY, value text);
      INSERT INTO items VALUES (1, 'first');`);
  });
  after(() => database.drop());

  const readItem = async () => (await database.db.query('SELECT * FROM items WHERE id = $1', [1])).rows[0];

  test('a parameterised statement is prepared once per connection and reused', async () => {
    assert.deepEqual(await readItem(), { id: 1, value: 'first' });
    assert.deepEqual(await readItem(), { id: 1, value: 'first' });
    const { rows } = await database.db.query<{ statement: string }>(
      'SELECT statement FROM pg_prepared_statements WHERE statement LIKE $1',
      ['%FROM items WHERE id = $1%'],
    );
    assert.equal(rows.length, 1);
  });

  test('a table that changed shape under a prepared statement is read again, not refused', async () => {
    assert.deepEqual(await readItem(), { id: 1, value: 'first' });
    await database.db.exec("ALTER TABLE items ADD COLUMN note text NOT NULL DEFAULT 'added'");
    assert.deepEqual(await readItem(), { id: 1, value: 'first', note: 'added' });
    assert.deepEqual(await readItem(), { id: 1, value: 'first', note: 'added' });
  });
});
