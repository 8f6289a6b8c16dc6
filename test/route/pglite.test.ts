// A route deployed by a service on embedded PGlite (local mode without PostgreSQL): the row locks,
// conditional updates and outbox writes of prepare and confirm-broadcast behave as on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Address } from '@solana/kit';
import { createPgliteDb } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';
import { type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { broadcastBundle } from '../helpers/wallet.ts';
import {
  confirmBroadcast,
  DEPLOYED_EVENTS,
  eventTypes,
  expectedLamportsSpent,
  lamportsOf,
  prepare,
  quotedTokenRoute,
  tokensOf,
  UNLIMITED,
} from './helpers.ts';

describe('deploying a route on embedded PGlite', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  before(async () => {
    const db = await createPgliteDb();
    await migrate(db);
    t = await createTestApp({ database: { url: 'pglite://memory', db, drop: () => db.close() } });
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
  });
  after(async () => {
    await t.close();
    await t.database.drop();
  });

  test('prepare, broadcast, both confirm-broadcast calls: processing, the source paying the estimate', async () => {
    const route = await quotedTokenRoute(t, caller, usdc, 3);
    const spent = await expectedLamportsSpent(t, route);
    const lamportsBefore = await lamportsOf(t, route.source.address);
    const { transfer, preparedTxs } = await prepare(caller, route.id);
    assert.equal(transfer.status, 'awaiting_signature');
    const funding = await broadcastBundle(t.chain.chain, route.source, preparedTxs, {
      through: 'keeperFunding',
    });
    const intermediate = await confirmBroadcast(caller, route.id, {
      keeperFundingSignature: funding.keeperFundingSignature,
      routeInitSignatures: [],
    });
    assert.equal(intermediate.json().transfer.phase, 'funding', intermediate.body);
    const rest = await broadcastBundle(t.chain.chain, route.source, {
      ...preparedTxs,
      keeperFundingTx: null,
    });
    const final = await confirmBroadcast(caller, route.id, {
      ...rest,
      keeperFundingSignature: funding.keeperFundingSignature,
    });
    assert.equal(final.statusCode, 200, final.body);
    assert.deepEqual(
      [final.json().transfer.status, final.json().transfer.phase],
      ['processing', 'executing'],
    );
    assert.equal(lamportsBefore - (await lamportsOf(t, route.source.address)), spent);
    assert.equal(await tokensOf(t, route.source.address, usdc), 1_000_000_000n - route.amountRaw);
    assert.deepEqual(await eventTypes(t, route.id), DEPLOYED_EVENTS);
    assert.equal((await prepare(caller, route.id)).preparedTxs.resume.nothingToDo, true);
  });

  test('a broadcast interrupted after the route’s creation resumes through prepare', async () => {
    const route = await quotedTokenRoute(t, caller, usdc, 10);
    const first = (await prepare(caller, route.id)).preparedTxs;
    const sent = await broadcastBundle(t.chain.chain, route.source, first, { through: 'routeInit' });
    t.clock.advance(2_000);
    const resumed = (await prepare(caller, route.id)).preparedTxs;
    assert.notEqual(resumed.recentBlockhash, first.recentBlockhash);
    assert.deepEqual(
      [resumed.keeperFundingTx, resumed.routeInitTxs.length, resumed.resume.routeAlreadyDeployed],
      [null, 0, true],
    );
    const rest = await broadcastBundle(t.chain.chain, route.source, resumed);
    const final = await confirmBroadcast(caller, route.id, {
      ...rest,
      keeperFundingSignature: sent.keeperFundingSignature,
      routeInitSignatures: sent.routeInitSignatures,
    });
    assert.equal(final.json().transfer.status, 'processing', final.body);
    assert.deepEqual(final.json().transfer.signatures.routeInit, sent.routeInitSignatures);
    // No intermediate call: the final one records the keeper's funding and the takeover together.
    assert.deepEqual(await eventTypes(t, route.id), DEPLOYED_EVENTS);
  });
});
