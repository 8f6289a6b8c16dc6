import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createIdempotencyStore } from '../../src/store/idempotency.ts';
import { createSecretBox } from '../../src/store/secret-box.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
before(async () => {
  database = await createTestDatabase({ poolSize: 4 });
});
after(() => database.drop());

test('a claim batch that fails lets go of the keys it claimed, so their retries run', async () => {
  const store = createIdempotencyStore(database.db, {
    ttlMs: 24 * 3600_000,
    lockTimeoutMs: 120_000,
    secrets: createSecretBox(randomBytes(32)),
  });
  const now = new Date();
  const claimOf = (key: string) => ({
    scope: 'key:1',
    key,
    requestHash: Buffer.from(key),
    method: 'POST',
    path: '/api/v1/transfers',
    now,
  });
  // A completed key whose stored response cannot be opened any more (damaged at rest).
  assert.deepEqual(await store.claim(claimOf('damaged-key')), { kind: 'claimed' });
  await store.complete({ scope: 'key:1', key: 'damaged-key', response: { status: 200, body: '{}' }, now });
  await database.db.query(`UPDATE idempotency_keys SET response_body = 'v1.AAAA' WHERE key = 'damaged-key'`);

  // Both in one batch: the damaged replay fails the batch after the fresh key was claimed.
  const [fresh, damaged] = await Promise.allSettled([
    store.claim(claimOf('fresh-key-1')),
    store.claim(claimOf('damaged-key')),
  ]);
  assert.deepEqual(fresh, { status: 'fulfilled', value: { kind: 'claimed' } });
  assert.equal(damaged.status, 'rejected');
});
