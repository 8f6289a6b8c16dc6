// The rules of prepare, confirm-broadcast and the funding endpoints that the happy paths do not
// reach: whose transfer it is, expired quotes, resumed bundles, a route deployed around its keeper.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Address } from '@solana/kit';
import { type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { broadcastBundle } from '../helpers/wallet.ts';
import { confirmBroadcast, lamportsOf, prepare, quotedTokenRoute, UNLIMITED } from './helpers.ts';

describe('prepare and confirm-broadcast, rule by rule', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
    // The platform's fee account for the mint exists, as after its first route: no bundle here
    // creates it along with the keeper's funding.
    await t.chain.cheats.setTokenAccount(t.platform.configAddress, usdc, { amount: 0n });
  });
  after(() => t.close());

  /** The transfer's status and phase as GET shows them. */
  const state = async (id: number) => {
    const transfer = (await caller.get(`/api/v1/transfers/${id}`)).json();
    return [transfer.status, transfer.phase];
  };

  test('another integration’s transfer, or another mode’s, is MH_030 on every deployment call, and stays untouched', async () => {
    const { id } = await quotedTokenRoute(t, caller, usdc);
    const stranger = await t.newCaller('test', UNLIMITED);
    const live = await t.newCaller('live', UNLIMITED);
    for (const other of [stranger, live]) {
      for (const [path, body] of [
        ['prepare', undefined],
        ['confirm-broadcast', { routeInitSignatures: [] }],
        ['funding/refresh', undefined],
        ['funding/confirm', { timeoutSeconds: 1 }],
      ] as const) {
        for (const transferId of [id, 987654321]) {
          const response = await other.post(`/api/v1/transfers/${transferId}/${path}`, body);
          assert.equal(response.statusCode, 404, `${path}: ${response.body}`);
          assert.deepEqual(
            [response.json().error.code, response.json().error.param],
            ['MH_030', 'transferId'],
          );
        }
      }
    }
    const { rows } = await t.database.db.query('SELECT keeper_address FROM transfers WHERE id = $1', [id]);
    assert.deepEqual(rows, [{ keeper_address: null }], 'no keeper given by a stranger’s prepare');
    assert.deepEqual(await state(id), ['quote', 'quoted']);
  });

  test('a quote past expiresAt is MH_034 for confirm-broadcast too, before the expiry worker gets to it', async () => {
    const { id } = await quotedTokenRoute(t, caller, usdc);
    t.clock.advance(15 * 60_000);
    assert.deepEqual(await state(id), ['quote', 'quoted'], 'the expiry worker has not run');
    const response = await confirmBroadcast(caller, id, { routeInitSignatures: [] });
    assert.equal(response.statusCode, 410, response.body);
    assert.deepEqual([response.json().error.code, response.json().error.param], ['MH_034', 'transferId']);
  });

  test('a resumed bundle without keeperFundingTx (the keeper funded on chain, never reported) needs no keeperFundingSignature', async () => {
    const { id, source } = await quotedTokenRoute(t, caller, usdc);
    const first = (await prepare(caller, id)).preparedTxs;
    // The wallet funds the keeper, then its process dies before the intermediate call.
    await broadcastBundle(t.chain.chain, source, first, { through: 'keeperFunding' });
    t.clock.advance(2_000);
    const resumed = (await prepare(caller, id)).preparedTxs;
    assert.equal(resumed.keeperFundingTx, null);
    assert.equal(resumed.resume.keeperAlreadyFunded, true);
    const sent = await broadcastBundle(t.chain.chain, source, resumed);
    assert.equal(sent.keeperFundingSignature, undefined);
    const final = await confirmBroadcast(caller, id, sent);
    assert.equal(final.statusCode, 200, final.body);
    assert.equal(final.json().transfer.status, 'processing');
  });

  test('a route deployed without its keeper’s funding is not taken over: prepare offers the funding until it lands', async () => {
    const { id, source } = await quotedTokenRoute(t, caller, usdc);
    const { preparedTxs } = await prepare(caller, id);
    // A wallet that sent every transaction at once, whose keeper funding was dropped.
    const sent = await broadcastBundle(t.chain.chain, source, { ...preparedTxs, keeperFundingTx: null });
    const refreshed = (await caller.post(`/api/v1/transfers/${id}/funding/refresh`)).json().transfer;
    assert.deepEqual([refreshed.status, refreshed.phase], ['awaiting_signature', 'deploying']);
    await t.reconciler.runOnce();
    assert.deepEqual(
      await state(id),
      ['awaiting_signature', 'deploying'],
      'a keeper without SOL runs no hop',
    );
    const unfunded = await confirmBroadcast(caller, id, sent);
    assert.equal(unfunded.statusCode, 400, unfunded.body);
    assert.equal(unfunded.json().error.code, 'MH_039');

    t.clock.advance(2_000);
    const resumed = (await prepare(caller, id)).preparedTxs;
    assert.ok(resumed.keeperFundingTx, 'the keeper’s funding is still to be sent');
    assert.deepEqual(
      [
        resumed.routeInitTxs.length,
        resumed.orchestratorInitTx,
        resumed.sessionInitTxs.length,
        resumed.resume.routeAlreadyDeployed,
        resumed.resume.keeperAlreadyFunded,
        resumed.resume.nothingToDo,
      ],
      [0, null, 0, true, false, false],
    );
    const funding = await broadcastBundle(t.chain.chain, source, resumed);
    const final = await confirmBroadcast(caller, id, {
      ...sent,
      ...funding,
      routeInitSignatures: sent.routeInitSignatures,
    });
    assert.equal(final.statusCode, 200, final.body);
    assert.deepEqual(
      [final.json().transfer.status, final.json().transfer.phase],
      ['processing', 'executing'],
    );
  });

  test('a final confirm after the reconciler’s takeover records its signatures, though the keeper has spent on hops', async () => {
    const { id, source } = await quotedTokenRoute(t, caller, usdc);
    const sent = await broadcastBundle(t.chain.chain, source, (await prepare(caller, id)).preparedTxs);
    await t.reconciler.runOnce();
    assert.deepEqual(await state(id), ['processing', 'executing']);
    const { rows } = await t.database.db.query<{ keeper_address: Address }>(
      'SELECT keeper_address FROM transfers WHERE id = $1',
      [id],
    );
    const keeper = rows[0]!.keeper_address;
    // As after the first hop: the keeper paid its fee.
    await t.chain.cheats.setAccount(keeper, { lamports: (await lamportsOf(t, keeper)) - 5_000n });
    const final = await confirmBroadcast(caller, id, sent);
    assert.equal(final.statusCode, 200, final.body);
    assert.deepEqual(final.json().transfer.signatures.routeInit, sent.routeInitSignatures);
    assert.deepEqual(final.json().transfer.signatures.sessionInit, sent.sessionInitSignatures);
  });

  test('any confirm-broadcast after a bundle with keeperFundingTx needs keeperFundingSignature until one is recorded (MH_039)', async () => {
    const { id, source } = await quotedTokenRoute(t, caller, usdc);
    const { preparedTxs } = await prepare(caller, id);
    const bare = await confirmBroadcast(caller, id, { routeInitSignatures: [] });
    assert.equal(bare.statusCode, 400, bare.body);
    assert.deepEqual([bare.json().error.code, bare.json().error.param], ['MH_039', 'keeperFundingSignature']);
    const funding = await broadcastBundle(t.chain.chain, source, preparedTxs, { through: 'keeperFunding' });
    const intermediate = await confirmBroadcast(caller, id, { ...funding, routeInitSignatures: [] });
    assert.equal(intermediate.json().transfer.phase, 'funding', intermediate.body);
    const again = await confirmBroadcast(caller, id, { routeInitSignatures: [] });
    assert.equal(again.statusCode, 200, 'recorded once, it need not be sent again');
  });
});
