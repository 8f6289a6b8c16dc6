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

const MINUTE = 60_000;

function setUp() {
  const store = createIdempotencyStore(database.db, {
    ttlMs: 24 * 60 * MINUTE,
    lockTimeoutMs: 2 * MINUTE,
    secrets: createSecretBox(randomBytes(32)),
  });
  const key = `key-${randomBytes(6).toString('hex')}`;
  const request = (now: Date, hash = 'request-a') => ({
    scope: 'key:1',
    key,
    requestHash: Buffer.from(hash),
    method: 'POST',
    path: '/api/v1/transfers',
    now,
  });
  return { store, key, request };
}

test('a key is claimed once; its response is replayed; another request with it is a mismatch', async () => {
  const { store, request } = setUp();
  const now = new Date('2026-06-01T12:00:00Z');
  const first = await store.claim(request(now));
  assert.equal(first.kind, 'claimed');
  assert.deepEqual(await store.claim(request(now)), { kind: 'in_progress' });
  if (first.kind !== 'claimed') return;
  assert.equal(
    await store.complete(database.db, first.claim, { status: 201, body: '{"ok":true}' }, now),
    true,
  );
  assert.deepEqual(await store.claim(request(now)), {
    kind: 'completed',
    response: { status: 201, body: '{"ok":true}' },
  });
  assert.deepEqual(await store.claim(request(now, 'request-b')), { kind: 'mismatch' });
  // Sealed at rest: the stored body is not the response's text.
  const { rows } = await database.db.query<{ response_body: string }>(
    'SELECT response_body FROM idempotency_keys WHERE key = $1',
    [first.claim.key],
  );
  assert.notEqual(rows[0]!.response_body, '{"ok":true}');
});

test('an abandoned claim is taken over by the same request; the first can then neither record nor release', async () => {
  const { store, request } = setUp();
  const start = new Date('2026-06-01T12:00:00Z');
  const first = await store.claim(request(start));
  assert.equal(first.kind, 'claimed');
  // Before the lock timeout the claim holds; a different request never takes it over.
  assert.deepEqual(await store.claim(request(new Date(start.getTime() + MINUTE))), { kind: 'in_progress' });
  const later = new Date(start.getTime() + 3 * MINUTE);
  assert.deepEqual(await store.claim(request(later, 'request-b')), { kind: 'mismatch' });
  const second = await store.claim(request(later));
  assert.equal(second.kind, 'claimed');
  if (first.kind !== 'claimed' || second.kind !== 'claimed') return;

  assert.equal(await store.complete(database.db, first.claim, { status: 200, body: '{}' }, later), false);
  await store.release(first.claim);
  assert.deepEqual(await store.claim(request(later)), { kind: 'in_progress' });
  assert.equal(
    await store.complete(database.db, second.claim, { status: 200, body: '"second"' }, later),
    true,
  );
  assert.deepEqual(await store.claim(request(later)), {
    kind: 'completed',
    response: { status: 200, body: '"second"' },
  });
});

test('a released claim lets the next request with the key run', async () => {
  const { store, request } = setUp();
  const now = new Date('2026-06-01T12:00:00Z');
  const first = await store.claim(request(now));
  if (first.kind !== 'claimed') throw new Error('not claimed');
  await store.release(first.claim);
  assert.equal((await store.claim(request(now, 'request-b'))).kind, 'claimed');
});

test('a record past its lifetime is forgotten: the key serves a new request', async () => {
  const { store, request } = setUp();
  const start = new Date('2026-06-01T12:00:00Z');
  const first = await store.claim(request(start));
  if (first.kind !== 'claimed') throw new Error('not claimed');
  await store.complete(database.db, first.claim, { status: 200, body: '{}' }, start);
  const nextDay = new Date(start.getTime() + 25 * 60 * MINUTE);
  assert.equal((await store.claim(request(nextDay, 'request-b'))).kind, 'claimed');
});
