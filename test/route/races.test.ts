// Calls that race the workers of the service: the statements between are interposed on the
// database to make each race happen at its worst moment.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, generateKeyPairSigner } from '@solana/kit';
import { pino } from 'pino';
import type { Db } from '../../src/store/db.ts';
import { createExpiryWorker } from '../../src/workers/expiry.ts';
import { type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { eventTypes, fundSource, quoteRoute, UNLIMITED } from './helpers.ts';

describe('prepare and the workers, at their worst moments', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  /** Runs right after prepare has given the transfer its keeper, when set. */
  let afterKeeperAssigned: (() => Promise<void>) | null = null;
  before(async () => {
    t = await createTestApp({
      wrapDb: (db: Db): Db => ({
        ...db,
        query: async (text, params) => {
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
    const source = await generateKeyPairSigner();
    await fundSource(t, source.address, { lamports: 20_000_000_000n, mint: usdc, tokens: 1_000_000_000n });
    const recipient = (await generateKeyPairSigner()).address;
    const { id } = await quoteRoute(caller, { source: source.address, recipient, hops: 3, mint: usdc });
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
});
