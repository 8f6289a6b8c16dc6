import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createPostgresDb } from '../../src/store/db.ts';
import { countOtherProcesses, databaseIdentity } from '../../src/store/deployment.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let first: TestDatabase;
let second: TestDatabase;
before(async () => {
  [first, second] = await Promise.all([
    createTestDatabase({ poolSize: 1 }),
    createTestDatabase({ poolSize: 1 }),
  ]);
});
after(async () => {
  await Promise.all([first.drop(), second.drop()]);
});

test('a database has one identity whatever URL reaches it, and another database another', async () => {
  const url = new URL(first.url);
  url.hostname = url.hostname === 'localhost' ? '127.0.0.1' : 'localhost';
  const otherSpelling = createPostgresDb({ url: url.toString(), poolSize: 1 });
  try {
    const identity = await databaseIdentity(first.db);
    assert.match(identity, /^\d+:tr_test_/);
    assert.equal(await databaseIdentity(otherSpelling), identity);
    assert.notEqual(await databaseIdentity(second.db), identity);
  } finally {
    await otherSpelling.close();
  }
});

test('other processes are counted by the application name of their connections, on this database only', async () => {
  const prefix = 'counting-test ';
  const open = (database: TestDatabase, id: string) =>
    createPostgresDb({ url: database.url, poolSize: 2, applicationName: `${prefix}${id}` });
  const self = open(first, 'self');
  // Two connections of one process, its LISTEN connection, another process, and one on another database.
  const peer = open(first, 'peer');
  const elsewhere = open(second, 'elsewhere');
  try {
    assert.equal(await countOtherProcesses(self, prefix, `${prefix}self`), 0);
    await Promise.all([
      peer.query('SELECT 1'),
      peer.query('SELECT 1'),
      peer.listen('anything', () => {}),
      elsewhere.query('SELECT 1'),
    ]);
    assert.equal(await countOtherProcesses(self, prefix, `${prefix}self`), 1);
    const another = open(first, 'another');
    await another.query('SELECT 1');
    assert.equal(await countOtherProcesses(self, prefix, `${prefix}self`), 2);
    assert.equal(await countOtherProcesses(another, prefix, `${prefix}another`), 2);
    await another.close();
  } finally {
    await Promise.all([self.close(), peer.close(), elsewhere.close()]);
  }
});
