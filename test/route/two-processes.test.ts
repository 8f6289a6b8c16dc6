// Two processes of one deployment (two apps sharing one PostgreSQL database, one chain and one
// platform) serving the same transfer at once: its keeper and route are fixed once, and its route
// is taken over exactly once, whichever calls and workers race.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type Address,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
} from '@solana/kit';
import { type Caller, callerFor, createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { type BroadcastSignatures, type Bundle, broadcastBundle } from '../helpers/wallet.ts';
import {
  confirmBroadcast,
  DEPLOYED_EVENTS,
  eventTypes,
  prepare,
  quotedTokenRoute,
  UNLIMITED,
} from './helpers.ts';

/** The accounts a wire transaction names in its message (without lookup tables). */
function accountsOf(base64: string): Address[] {
  const { messageBytes } = getTransactionDecoder().decode(getBase64Encoder().encode(base64));
  return [...getCompiledTransactionMessageDecoder().decode(messageBytes).staticAccounts];
}

describe('two processes on one database', () => {
  let a: TestApp;
  let b: TestApp;
  /** The same integration's key on each app. */
  let callers: [Caller, Caller];
  let usdc: Address;
  before(async () => {
    a = await createTestApp();
    b = await createTestApp({ peer: a });
    const caller = await a.newCaller('test', UNLIMITED);
    callers = [caller, callerFor(b.app, caller.integrationId, { id: caller.keyId, key: caller.key })];
    usdc = await createMint(a.chain, { decimals: 6 });
  });
  after(async () => {
    await b.close();
    await a.close();
  });

  /** The caller on app `i % 2`: requests spread over both processes. */
  const on = (i: number) => callers[i % 2]!;

  /**
   * Prepares through app a, funds the keeper and reports it (phase `funding`), then broadcasts the
   * rest; answers what the final report says.
   */
  async function broadcast(): Promise<{ id: number; sent: BroadcastSignatures }> {
    const { id, source } = await quotedTokenRoute(a, on(0), usdc);
    const { preparedTxs } = await prepare(on(0), id);
    const funding = await broadcastBundle(a.chain.chain, source, preparedTxs, { through: 'keeperFunding' });
    const intermediate = await confirmBroadcast(on(0), id, { ...funding, routeInitSignatures: [] });
    assert.equal(intermediate.json().transfer.phase, 'funding', intermediate.body);
    const rest = await broadcastBundle(a.chain.chain, source, { ...preparedTxs, keeperFundingTx: null });
    return { id, sent: { ...rest, keeperFundingSignature: funding.keeperFundingSignature } };
  }

  /** The transfer's row as both processes see it. */
  async function row(id: number) {
    const { rows } = await a.database.db.query<{
      status: string;
      phase: string;
      keeper_address: Address;
      route_address: Address;
      keeper_funding_lamports: string;
      signatures: { routeInit: string[]; sessionInit: string[] };
    }>('SELECT * FROM transfers WHERE id = $1', [id]);
    return rows[0]!;
  }

  test('ten concurrent prepares over both processes fix one keeper and one route; every bundle funds that keeper', async () => {
    const { id, source } = await quotedTokenRoute(a, on(0), usdc);
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => on(i).post(`/api/v1/transfers/${id}/prepare`)),
    );
    for (const response of responses) assert.equal(response.statusCode, 200, response.body);
    const bundles = responses.map((response) => response.json().preparedTxs as Bundle);
    const fixed = await row(id);
    assert.equal(fixed.status, 'awaiting_signature');
    const funded = accountsOf(bundles[0]!.keeperFundingTx!);
    assert.ok(funded.includes(fixed.keeper_address), 'funds the transfer’s keeper');
    for (const bundle of bundles) {
      assert.deepEqual(accountsOf(bundle.keeperFundingTx!), funded, 'the same keeper in every bundle');
      assert.ok(accountsOf(bundle.routeInitTxs[0]!.base64).includes(fixed.route_address));
    }

    // Any of the bundles deploys the route, through either process.
    const sent = await broadcastBundle(a.chain.chain, source, bundles[7]!);
    const final = await confirmBroadcast(on(1), id, sent);
    assert.equal(final.json().transfer.status, 'processing', final.body);
    const again = await prepare(on(0), id);
    assert.equal(again.preparedTxs.resume.nothingToDo, true);
  });

  test('concurrent final confirm-broadcasts of one bundle over both processes take the route over once', async () => {
    const { id, sent } = await broadcast();
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => confirmBroadcast(on(i), id, sent)),
    );
    for (const response of responses) {
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().transfer.status, 'processing');
    }
    assert.deepEqual(await eventTypes(a, id), DEPLOYED_EVENTS);
    const taken = await row(id);
    assert.deepEqual([taken.status, taken.phase], ['processing', 'executing']);
    assert.deepEqual(taken.signatures.routeInit, sent.routeInitSignatures);
    assert.deepEqual(taken.signatures.sessionInit, sent.sessionInitSignatures);
  });

  test('the reconciler running in both processes races a confirm-broadcast in each: one takeover', async () => {
    const { id, sent } = await broadcast();
    const [lookedAtA, lookedAtB, ...confirms] = await Promise.all([
      a.reconciler.runOnce(),
      b.reconciler.runOnce(),
      confirmBroadcast(on(0), id, sent),
      confirmBroadcast(on(1), id, sent),
    ]);
    assert.equal(lookedAtA + lookedAtB, 1, 'the transfer is claimed by one of them');
    for (const response of confirms) {
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().transfer.status, 'processing');
    }
    assert.deepEqual(await eventTypes(a, id), DEPLOYED_EVENTS);
    const taken = await row(id);
    assert.deepEqual(taken.signatures.routeInit, sent.routeInitSignatures, 'the confirm’s signatures kept');
  });
});
