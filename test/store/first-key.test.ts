import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { showFirstKey } from '../../src/bootstrap.ts';
import { hashApiKey } from '../../src/domain/api-keys.ts';
import { createManualClock } from '../../src/domain/clock.ts';
import { createIntegrationStore, type IntegrationStore } from '../../src/store/integrations.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

const clock = createManualClock(new Date('2026-01-05T10:00:00Z'));
let database: TestDatabase;
let integrations: IntegrationStore;
beforeEach(async () => {
  database = await createTestDatabase();
  integrations = createIntegrationStore(database.db);
});
afterEach(() => database.drop());

/** Runs one start's first-key step and returns what it showed. */
async function start(store = integrations) {
  const shown: { key: string; created: boolean }[] = [];
  await showFirstKey(store, clock, (key, created) => shown.push({ key, created }));
  return shown;
}

/** The key rows of an integration, newest last. */
async function keysOf(integrationId: number) {
  const { rows } = await database.db.query<{ key_hash: Buffer; revoked_at: Date | null }>(
    'SELECT key_hash, revoked_at FROM api_keys WHERE integration_id = $1 ORDER BY id',
    [integrationId],
  );
  return rows;
}

test('the first start creates the integration "local" with a test key, shows it once, and later starts show none', async () => {
  const [first, ...more] = await start();
  assert.equal(more.length, 0);
  assert.equal(first?.created, true);
  assert.match(first!.key, /^mh_test_/);
  const listed = await integrations.list();
  assert.deepEqual(
    listed.map((integration) => integration.name),
    ['local'],
  );
  const keys = await keysOf(listed[0]!.id);
  assert.equal(keys.length, 1);
  assert.deepEqual(keys[0]!.key_hash, hashApiKey(first!.key));

  assert.deepEqual(await start(), []);
  assert.equal((await keysOf(listed[0]!.id)).length, 1);
});

test('a start that stops while showing the key stores nothing, and the next start shows a working one', async () => {
  await assert.rejects(
    showFirstKey(integrations, clock, () => {
      throw new Error('stopped before the key was shown');
    }),
    /stopped before the key was shown/,
  );
  assert.deepEqual(await integrations.list(), []);
  const { rows } = await database.db.query('SELECT key FROM service_settings WHERE key = $1', [
    'first_key_shown',
  ]);
  assert.deepEqual(rows, []);

  const [shown] = await start();
  assert.equal(shown?.created, true);
  const principal = await integrations.findPrincipal(hashApiKey(shown!.key));
  assert.equal(principal?.revoked, false);
});

test('an integration "local" whose first key was never shown (set up by an earlier version) receives a fresh key, once', async () => {
  const local = await integrations.create({ name: 'local', settings: {}, now: clock.now() });
  await integrations.createKey({
    integrationId: local.id,
    mode: 'test',
    hash: hashApiKey('mh_test_never_shown_never_shown_000000'),
    hint: 'mh_test_…0000',
    now: clock.now(),
  });
  const [shown, ...more] = await start();
  assert.equal(more.length, 0);
  assert.equal(shown?.created, false);
  assert.equal((await integrations.findPrincipal(hashApiKey(shown!.key)))?.integrationId, local.id);
  // The unseen key is left as it was: it may have been shown by a version that kept no record.
  assert.deepEqual(
    (await keysOf(local.id)).map((key) => key.revoked_at),
    [null, null],
  );
  assert.deepEqual(await start(), []);
});

test('a database set up with other integrations gets no key, not even for an integration named "local" later', async () => {
  await integrations.create({ name: 'Acme Wallet', settings: {}, now: clock.now() });
  assert.deepEqual(await start(), []);
  const local = await integrations.create({ name: 'local', settings: {}, now: clock.now() });
  assert.deepEqual(await start(), []);
  assert.deepEqual(await keysOf(local.id), []);
});

test('processes starting together on one database show exactly one key', async () => {
  const stores = Array.from({ length: 4 }, () => createIntegrationStore(database.db));
  const shown = (await Promise.all(stores.map((store) => start(store)))).flat();
  assert.equal(shown.length, 1);
  assert.equal((await integrations.list()).length, 1);
});
