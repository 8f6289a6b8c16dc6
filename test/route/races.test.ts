// Calls that race the workers of the service: the statements between are interposed on the
// database to make each race happen at its worst moment.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setImmediate } from 'node:timers/promises';
import type { Address } from '@solana/kit';
import { pino } from 'pino';
import type { Db } from '../../src/store/db.ts';
import { createExpiryWorker } from '../../src/workers/expiry.ts';
import { type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { broadcastBundle } from '../helpers/wallet.ts';
import { eventTypes, lamportsOf, prepare, quotedTokenRoute, UNLIMITED } from './helpers.ts';

describe('prepare and the workers, at their worst moments', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  /** Runs right after prepare has given the transfer its keeper, when set. */
  let afterKeeperAssigned: (() => Promise<void>) | null = null;
  /** Runs before a keeper's key is read to return its lamports, when set. */
  let beforeKeeperKeyRead: (() => Promise<void>) | null = null;
  before(async () => {
    t = await createTestApp({
      wrapDb: (db: Db): Db => ({
        ...db,
        query: async (text, params) => {
          if (beforeKeeperKeyRead && text.includes('SELECT keeper_secret')) await beforeKeeperKeyRead();
          const result = await db.query(text, params);
          if (afterKeeperAssigned && text.includes('SET route_address')) await afterKeeperAssigned();
          return result as never;
        },
      }),
    });
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
  });
  after(() => t.close());

  test('a quote the expiry worker expires while prepare builds its bundle is MH_034: no bundle handed out', async () => {
    const { id } = await quotedTokenRoute(t, caller, usdc);
    const expiry = createExpiryWorker({
      transfers: t.store.transfers,
      clock: t.clock,
      log: pino({ level: 'silent' }),
    });
    afterKeeperAssigned = async () => {
      afterKeeperAssigned = null;
      t.clock.advance(15 * 60_000);
      assert.equal(await expiry.runOnce(), 1);
    };
    const response = await caller.post(`/api/v1/transfers/${id}/prepare`);
    assert.equal(afterKeeperAssigned, null, 'the race happened');
    assert.equal(response.statusCode, 410, response.body);
    assert.equal(response.json().error.code, 'MH_034');
    const transfer = (await caller.get(`/api/v1/transfers/${id}`)).json();
    assert.deepEqual([transfer.status, transfer.phase], ['expired', 'expired']);
    assert.deepEqual(await eventTypes(t, id), [
      'transfer.quote_created',
      'transfer.phase_changed',
      'transfer.expired',
    ]);
  });

  for (const laterSlot of [false, true]) {
    test(`an abandoned deployment settled by two refreshes at once${laterSlot ? ', the second a slot later' : ''}: the keeper’s lamports return once, both answer it expired`, async () => {
      const { id, source } = await quotedTokenRoute(t, caller, usdc);
      const { preparedTxs } = await prepare(caller, id);
      await broadcastBundle(t.chain.chain, source, preparedTxs, { through: 'keeperFunding' });
      const { rows } = await t.database.db.query<{ keeper_address: Address }>(
        'SELECT keeper_address FROM transfers WHERE id = $1',
        [id],
      );
      const keeper = rows[0]!.keeper_address;
      const keeperLamports = await lamportsOf(t, keeper);
      const before = await lamportsOf(t, source.address);
      t.clock.advance(25 * 60_000);
      // Both refreshes saw the keeper's lamports before either returned them. The second goes on
      // with the first, or once the first has returned them, a slot later (its transaction then
      // differs from the first's: a fresh blockhash).
      let arrived = 0;
      const bothArrived = Promise.withResolvers<void>();
      beforeKeeperKeyRead = async () => {
        if (++arrived === 1) return bothArrived.promise;
        bothArrived.resolve();
        if (!laterSlot) return;
        while ((await lamportsOf(t, keeper)) > 0n) await setImmediate();
        t.clock.advance(1_000);
      };
      const responses = await Promise.all([
        caller.post(`/api/v1/transfers/${id}/funding/refresh`),
        caller.post(`/api/v1/transfers/${id}/funding/refresh`),
      ]);
      beforeKeeperKeyRead = null;
      assert.equal(arrived, 2, 'the race happened');
      for (const response of responses) {
        assert.equal(response.statusCode, 200, response.body);
        assert.equal(response.json().transfer.status, 'expired');
      }
      assert.equal(await lamportsOf(t, keeper), 0n);
      assert.equal((await lamportsOf(t, source.address)) - before, keeperLamports - 5_000n);
      const events = await eventTypes(t, id);
      assert.deepEqual(events.slice(-2), ['transfer.phase_changed', 'transfer.expired']);
      assert.equal(events.filter((type) => type === 'transfer.expired').length, 1);
    });
  }
});
