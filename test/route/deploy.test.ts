import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, generateKeyPairSigner, type KeyPairSigner } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { type Caller, createTestApp, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { type Bundle, broadcastBundle, type Group } from '../helpers/wallet.ts';

const UNLIMITED = { rateLimitMultiplier: 1000 };
const SOURCE_LAMPORTS = 50_000_000_000n;
const SOURCE_TOKENS = 1_000_000_000n;

interface Route {
  source: KeyPairSigner;
  recipient: Address;
  mint: Address;
  transfer: { id: number; status: string };
  estimate: {
    sol: { requiredSolUpFrontLamports: number; refundableLamports: number };
    tokens: { netDeliveredRaw: string };
  };
}

describe('deploying a route: prepare, broadcast, confirm-broadcast', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
  });
  after(() => t.close());

  const lamports = async (address: Address) => BigInt(await t.chain.chain.getBalance(address));
  const tokens = async (owner: Address, mint: Address) => {
    const [account] = await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    return (await t.chain.chain.getTokenAccount(account))?.amount ?? 0n;
  };

  /** A funded source wallet, a fresh recipient, an estimate and a created transfer. */
  async function quote(options: { hops: number; native?: boolean; amountRaw?: string }): Promise<Route> {
    const source = await generateKeyPairSigner();
    const recipient = (await generateKeyPairSigner()).address;
    await t.chain.cheats.airdrop(source.address, SOURCE_LAMPORTS);
    const mint = options.native ? (SOL_MINT as Address) : usdc;
    if (!options.native)
      await t.chain.cheats.setTokenAccount(source.address, usdc, { amount: SOURCE_TOKENS });
    const amountRaw = options.amountRaw ?? (options.native ? '2000000000' : '250000000');
    const terms = {
      tokenMint: mint,
      amountRaw,
      hops: options.hops,
      tokenPriceUsd: options.native ? undefined : 1,
    };
    const estimate = (await caller.post('/api/v1/transfers/estimate', terms)).json();
    const created = await caller.post('/api/v1/transfers', {
      ...terms,
      amountTokens: options.native ? '2' : '250',
      sourceOwner: source.address,
      recipientWallet: recipient,
    });
    assert.equal(created.statusCode, 200, created.body);
    return { source, recipient, mint, transfer: created.json(), estimate };
  }

  const prepare = async (id: number) => {
    const response = await caller.post(`/api/v1/transfers/${id}/prepare`);
    assert.equal(response.statusCode, 200, response.body);
    return response.json() as { transfer: { status: string; phase: string }; preparedTxs: Bundle };
  };
  const confirm = (id: number, body: object) =>
    caller.post(`/api/v1/transfers/${id}/confirm-broadcast`, body);

  /** Prepares, broadcasts every group and makes both confirm calls, as an integrator does. */
  async function deploy(route: Route) {
    const { preparedTxs } = await prepare(route.transfer.id);
    const funding = await broadcastBundle(t.chain.chain, route.source, preparedTxs, {
      through: 'keeperFunding',
    });
    const intermediate = await confirm(route.transfer.id, {
      keeperFundingSignature: funding.keeperFundingSignature,
      routeInitSignatures: [],
    });
    assert.equal(intermediate.statusCode, 200, intermediate.body);
    assert.equal(intermediate.json().transfer.status, 'awaiting_signature');
    assert.equal(intermediate.json().transfer.phase, 'funding');
    const rest = await broadcastBundle(t.chain.chain, route.source, {
      ...preparedTxs,
      keeperFundingTx: null,
    });
    const final = await confirm(route.transfer.id, {
      ...rest,
      keeperFundingSignature: funding.keeperFundingSignature,
    });
    assert.equal(final.statusCode, 200, final.body);
    return { preparedTxs, final: final.json().transfer };
  }

  for (const [hops, native] of [
    [3, false],
    [10, false],
    [3, true],
    [10, true],
  ] as const) {
    test(`${native ? 'native SOL' : 'SPL token'}, ${hops} hops: from quote to processing, the source paying exactly the estimate`, async () => {
      const route = await quote({ hops, native });
      // The estimate counts the platform fee account for the mint in full; only the first route of
      // a mint has the bundle create it.
      const [feeAccount] = await findAssociatedTokenPda({
        owner: t.platform.feeWallet,
        mint: route.mint,
        tokenProgram: TOKEN_PROGRAM_ADDRESS,
      });
      const tokenRent = BigInt(await t.chain.chain.getMinimumBalanceForRentExemption(165));
      const feeAccountExisted = (await t.chain.chain.getAccount(feeAccount)) !== null;
      const lamportsBefore = await lamports(route.source.address);
      const tokensBefore = await tokens(route.source.address, route.mint);
      const { preparedTxs, final } = await deploy(route);

      assert.equal(preparedTxs.resume.nothingToDo, false);
      assert.equal(preparedTxs.resume.totalHops, hops);
      assert.equal(final.status, 'processing');
      assert.equal(final.phase, 'executing');
      assert.ok(final.depositReceivedAt);
      assert.equal(final.signatures.routeInit.length, preparedTxs.routeInitTxs.length);
      assert.equal(final.signatures.sessionInit.length, preparedTxs.sessionInitTxs.length);

      const amount = native ? 2_000_000_000n : 250_000_000n;
      const spent = lamportsBefore - (await lamports(route.source.address));
      const required =
        BigInt(route.estimate.sol.requiredSolUpFrontLamports) - (feeAccountExisted ? tokenRent : 0n);
      if (native) {
        // The wrapped-SOL account the bundle opened was closed again within the deployment.
        assert.equal(spent, required + amount - tokenRent);
        assert.equal(
          await tokens(route.source.address, route.mint),
          0n,
          'no wrapped SOL left with the source',
        );
      } else {
        assert.equal(spent, required);
        assert.equal(tokensBefore - (await tokens(route.source.address, route.mint)), amount);
      }

      const events = await t.database.db.query<{ type: string }>(
        'SELECT type FROM events WHERE transfer_id = $1 ORDER BY sequence',
        [route.transfer.id],
      );
      assert.deepEqual(
        events.rows.map((row) => row.type),
        [
          'transfer.quote_created',
          'transfer.phase_changed',
          'transfer.deposit_confirmed',
          'transfer.processing',
          'transfer.phase_changed',
        ],
      );
      const again = await prepare(route.transfer.id);
      assert.equal(again.preparedTxs.resume.nothingToDo, true);
    });
  }
});
