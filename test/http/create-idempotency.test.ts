import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Db, Sql } from '../../src/store/db.ts';
import { type Caller, callerFor, createTestApp, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

const body = {
  tokenMint: SOL_MINT,
  amountRaw: '2000000000',
  amountTokens: '2',
  sourceOwner: 'Vote111111111111111111111111111111111111111',
  recipientWallet: 'Stake11111111111111111111111111111111111111',
  hops: 3,
};
const UNLIMITED = { rateLimitMultiplier: 1000 };

async function countRows(db: Db, integrationId: number) {
  const { rows } = await db.query<{ transfers: number; events: number }>(
    `SELECT (SELECT count(*)::int FROM transfers WHERE integration_id = $1) AS transfers,
            (SELECT count(*)::int FROM events WHERE integration_id = $1) AS events`,
    [integrationId],
  );
  return rows[0]!;
}

describe('a create and its idempotent answer commit together', () => {
  let database: TestDatabase;
  let first: TestApp;
  let second: TestApp;
  before(async () => {
    database = await createTestDatabase();
    // Two service instances on one database, as two processes are.
    [first, second] = await Promise.all([createTestApp({ database }), createTestApp({ database })]);
  });
  after(async () => {
    await Promise.all([first.close(), second.close()]);
    await database.drop();
  });

  test('20 concurrent creates with one key across two processes make one transfer and one event', async () => {
    const caller = await first.newCaller('test', UNLIMITED);
    const key = { id: caller.keyId, key: caller.key };
    const callers: Caller[] = [caller, callerFor(second.app, caller.integrationId, key)];
    const headers = { 'idempotency-key': 'concurrent-create-0001' };
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, index) => callers[index % 2]!.post('/api/v1/transfers', body, headers)),
    );
    const executed = responses.filter(
      (response) => response.statusCode === 200 && response.headers['idempotent-replayed'] === undefined,
    );
    const replayed = responses.filter((response) => response.headers['idempotent-replayed'] === 'true');
    const inProgress = responses.filter((response) => response.statusCode === 409);
    assert.equal(executed.length, 1);
    assert.deepEqual(
      responses.filter((r) => ![200, 409].includes(r.statusCode)).map((r) => r.body),
      [],
    );
    assert.equal(executed.length + replayed.length + inProgress.length, 20);
    for (const response of inProgress) assert.equal(response.json().error.code, 'MH_072');
    for (const response of replayed) assert.equal(response.body, executed[0]!.body);
    assert.deepEqual(await countRows(database.db, caller.integrationId), { transfers: 1, events: 1 });

    // Once the first has answered, every process replays its answer byte for byte.
    for (const retry of callers) {
      const again = await retry.post('/api/v1/transfers', body, headers);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.body, executed[0]!.body);
    }
  });
});

describe('a create that cannot record its answer changes nothing', () => {
  let t: TestApp;
  /** When set, the statement recording an idempotent answer inside a transaction fails. */
  let failRecording = false;
  /** When set, the key's claim is taken over (as after its timeout) just before the change commits. */
  let takeOverClaim = false;
  before(async () => {
    t = await createTestApp({
      wrapDb: (db: Db): Db => ({
        ...db,
        transaction: (fn) =>
          db.transaction((tx) =>
            fn({
              ...tx,
              query: async (text, params) => {
                if (text.includes('UPDATE idempotency_keys')) {
                  if (failRecording) throw new Error('the database went away');
                  if (takeOverClaim) {
                    await db.query(`UPDATE idempotency_keys SET locked_at = locked_at + interval '1 second'`);
                  }
                }
                return tx.query(text, params);
              },
            } satisfies Sql),
          ),
      }),
    });
  });
  after(() => t.close());

  test('a failure after the insert rolls back the transfer and its event; the retry creates it once', async () => {
    const caller = await t.newCaller('test', UNLIMITED);
    const headers = { 'idempotency-key': 'failing-create-0001' };
    failRecording = true;
    const failed = await caller.post('/api/v1/transfers', body, headers);
    failRecording = false;
    assert.equal(failed.statusCode, 500);
    assert.equal(failed.json().error.code, 'MH_090');
    assert.deepEqual(await countRows(t.database.db, caller.integrationId), { transfers: 0, events: 0 });

    const retried = await caller.post('/api/v1/transfers', body, headers);
    assert.equal(retried.statusCode, 200);
    assert.equal(retried.headers['idempotent-replayed'], undefined);
    assert.deepEqual(await countRows(t.database.db, caller.integrationId), { transfers: 1, events: 1 });
  });

  test('a claim taken over while the create ran: the create is rolled back and answered MH_072', async () => {
    const caller = await t.newCaller('test', UNLIMITED);
    takeOverClaim = true;
    const raced = await caller.post('/api/v1/transfers', body, { 'idempotency-key': 'raced-create-0001' });
    takeOverClaim = false;
    assert.equal(raced.statusCode, 409);
    assert.equal(raced.json().error.code, 'MH_072');
    assert.deepEqual(await countRows(t.database.db, caller.integrationId), { transfers: 0, events: 0 });
  });
});
