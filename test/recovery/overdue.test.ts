// Routes past their on-chain deadline: the service notices them without any call (the overdue
// sweep) and records them `recoverable`, so integrators learn by webhook that the source can
// rescue, even when no keeper is left to run or fail the route.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, createKeyPairSignerFromPrivateKeyBytes } from '@solana/kit';
import { decodeRoute } from '../../src/chain/router/accounts.ts';
import { getMarkFailedInstruction } from '../../src/chain/router/instructions.ts';
import { sendAndConfirm } from '../../src/platform/send.ts';
import { type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { deployRoute, quoteRoute } from '../helpers/route.ts';
import {
  assertMadeWhole,
  eventTypes,
  getTransfer,
  holdings,
  rescueThroughApi,
  routeRow,
  runHops,
  travelTo,
  UNLIMITED,
} from './helpers.ts';

describe('routes past their deadline', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  let receiver: Receiver;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
    receiver = await startReceiver();
    const endpoint = await caller.post('/api/v1/webhooks', { url: receiver.url });
    assert.equal(endpoint.statusCode, 200, endpoint.body);
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  /** The event types queued for delivery to the integration's endpoint for a transfer, in order. */
  const queued = async (id: number) =>
    (
      await t.database.db.query<{ type: string }>(
        `SELECT event.type FROM webhook_deliveries delivery JOIN events event ON event.id = delivery.event_id
          WHERE delivery.transfer_id = $1 ORDER BY event.sequence`,
        [id],
      )
    ).rows.map((row) => row.type);

  test('with the keeper gone after one hop, the sweep records the route recoverable; the source rescues all', async () => {
    const route = await quoteRoute(t, caller, { hops: 4, mint: usdc, arrivalSeconds: 600 });
    const before = await holdings(t, route);
    await deployRoute(t, caller, route);
    await runHops(t, route.id, 1);
    const { deadlineAt } = await routeRow(t, route.id);
    await travelTo(t, deadlineAt!);
    await t.overdue.runOnce();
    assert.equal((await getTransfer(caller, route.id)).phase, 'executing', 'not before the deadline');

    await travelTo(t, deadlineAt! + 2n);
    assert.equal(await t.overdue.runOnce(), 1);
    const transfer = await getTransfer(caller, route.id);
    assert.equal(transfer.status, 'failed');
    assert.equal(transfer.phase, 'recoverable');
    assert.equal(transfer.lastError.code, 'MH_031');
    assert.match(transfer.lastError.message, /passed its deadline/);
    assert.equal(transfer.recovery.canRescue, true);
    assert.deepEqual((await eventTypes(t, route.id)).slice(-3), [
      'transfer.phase_changed',
      'transfer.failed',
      'transfer.recoverable',
    ]);
    assert.deepEqual((await queued(route.id)).slice(-3), [
      'transfer.phase_changed',
      'transfer.failed',
      'transfer.recoverable',
    ]);
    assert.equal(await t.overdue.runOnce(), 0, 'recorded once');

    await rescueThroughApi(t, caller, route);
    await assertMadeWhole(t, route, before);
  });

  test('a route its keeper marked failed on chain but never recorded becomes failed', async () => {
    const route = await quoteRoute(t, caller, { hops: 3, mint: usdc, arrivalSeconds: 600 });
    const before = await holdings(t, route);
    await deployRoute(t, caller, route);
    // The keeper marks the route failed, and its process dies before recording it.
    const keeper = await createKeyPairSignerFromPrivateKeyBytes(
      (await t.store.deployments.keeperPrivateKey(route.id))!,
    );
    const row = await routeRow(t, route.id);
    await sendAndConfirm(t.chain.chain, keeper, [getMarkFailedInstruction({ keeper, route: row.route })], {
      pollMs: 10,
    });
    assert.equal(decodeRoute((await t.chain.chain.getAccount(row.route))!.data).status, 'failed');

    await travelTo(t, row.deadlineAt! + 2n);
    await t.overdue.runOnce();
    const transfer = await getTransfer(caller, route.id);
    assert.equal(transfer.phase, 'failed');
    assert.match(transfer.lastError.message, /marked failed on chain/);
    assert.deepEqual((await eventTypes(t, route.id)).slice(-2), [
      'transfer.phase_changed',
      'transfer.failed',
    ]);
    await rescueThroughApi(t, caller, route);
    await assertMadeWhole(t, route, before);
  });
});
