// On a cluster that screens routes, the bundle collects the screening deposit from the source: the
// deposit is not in the estimate, prepare's affordability check counts it, and the route holds it
// until the verdict.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, generateKeyPairSigner, type KeyPairSigner } from '@solana/kit';
import { decodeRoute, decodeRouterConfig } from '../../src/chain/router/accounts.ts';
import { type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { broadcastBundle } from '../helpers/wallet.ts';
import {
  confirmBroadcast,
  expectedLamportsSpent,
  fundSource,
  lamportsOf,
  prepare,
  type Quoted,
  quoteRoute,
  UNLIMITED,
} from './helpers.ts';

describe('deploying a route where screening is required', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  let deposit: bigint;
  before(async () => {
    t = await createTestApp({ platform: { settings: { screeningRequired: true } } });
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
    const config = await t.chain.chain.getAccount(t.platform.configAddress);
    deposit = decodeRouterConfig(config!.data).screeningDepositLamports;
  });
  after(() => t.close());

  /**
   * A fresh source and its 3-hop transfer; the source then gets 1,000 tokens on a token route and
   * the lamports `lamports` answers for the quote.
   */
  async function quoted(options: { native: boolean; lamports: (quote: Quoted) => Promise<bigint> }) {
    const source = await generateKeyPairSigner();
    const mint = options.native ? undefined : usdc;
    const recipient = (await generateKeyPairSigner()).address;
    const quote = await quoteRoute(caller, {
      source: source.address,
      recipient,
      hops: 3,
      ...(mint ? { mint } : {}),
    });
    await fundSource(t, source.address, {
      lamports: await options.lamports(quote),
      mint,
      tokens: 1_000_000_000n,
    });
    return { source, ...quote };
  }

  /** Prepares, broadcasts the whole bundle and confirms it in one call; the transfer must be processing. */
  async function deploy(route: Quoted & { source: KeyPairSigner }) {
    const { preparedTxs } = await prepare(caller, route.id);
    const sent = await broadcastBundle(t.chain.chain, route.source, preparedTxs);
    const final = await confirmBroadcast(caller, route.id, sent);
    assert.equal(final.json().transfer?.status, 'processing', final.body);
  }

  test('the config’s deposit is 0.002 SOL', () => {
    assert.equal(deposit, 2_000_000n);
  });

  for (const native of [false, true]) {
    test(`${native ? 'native SOL' : 'SPL token'}: the source pays the estimate’s figure plus the deposit, which the route holds`, async () => {
      const route = await quoted({ native, lamports: async () => 20_000_000_000n });
      const spent = (await expectedLamportsSpent(t, route)) + deposit;
      const before = await lamportsOf(t, route.source.address);
      await deploy(route);
      assert.equal(before - (await lamportsOf(t, route.source.address)), spent);
      const { rows } = await t.database.db.query<{ route_address: Address }>(
        'SELECT route_address FROM transfers WHERE id = $1',
        [route.id],
      );
      const onChain = decodeRoute((await t.chain.chain.getAccount(rows[0]!.route_address))!.data);
      assert.deepEqual([onChain.screening, onChain.depositLamports], ['pending', deposit]);
    });
  }

  test('a source short by exactly the deposit gets MH_016; with it, the deployment leaves the source empty', async () => {
    // What the estimate says the source pays (the platform's fee account for the mint exists by
    // now), and the deposit.
    const needed = async (quote: Quoted) => (await expectedLamportsSpent(t, quote)) + deposit;
    const short = await quoted({ native: false, lamports: async (quote) => (await needed(quote)) - deposit });
    const refused = await caller.post(`/api/v1/transfers/${short.id}/prepare`);
    assert.equal(refused.statusCode, 400, refused.body);
    assert.deepEqual([refused.json().error.code, refused.json().error.param], ['MH_016', 'sourceOwner']);
    assert.match(refused.json().error.message, /the screening deposit/);
    assert.match(refused.json().error.message, new RegExp(`add at least ${deposit} lamports`));

    const exact = await quoted({ native: false, lamports: needed });
    await deploy(exact);
    assert.equal(await lamportsOf(t, exact.source.address), 0n);
  });
});
