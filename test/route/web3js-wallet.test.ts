// The integrator's user signs and broadcasts the prepared bundle with @solana/web3.js 1.x against
// the embedded chain's JSON-RPC endpoint, as most wallets in the field still do: every method the
// library calls on the way (simulateTransaction, sendTransaction, signatureSubscribe,
// getSignatureStatuses, getBlockHeight, getLatestBlockhash, getBalance, getAccountInfo,
// getTokenAccountBalance, requestAirdrop) must answer as a validator does.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Address } from '@solana/kit';
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { broadcastWithWeb3js, closeConnection } from '../helpers/wallet.ts';
import {
  confirmBroadcast,
  DEPLOYED_EVENTS,
  eventTypes,
  expectedLamportsSpent,
  prepare,
  quoteRoute,
  UNLIMITED,
} from './helpers.ts';

describe('a wallet on @solana/web3.js 1.x deploys a route through the embedded chain’s endpoint', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  let connection: Connection;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
    connection = new Connection(t.chain.rpcUrl, { commitment: 'confirmed', wsEndpoint: t.chain.wsUrl });
  });
  after(async () => {
    await closeConnection(connection);
    await t.close();
  });

  /** The source's balance of `mint` as web3.js reads it (0 without a token account). */
  async function tokenBalance(owner: PublicKey, mint: Address): Promise<bigint> {
    const [account] = await findAssociatedTokenPda({
      owner: owner.toBase58() as Address,
      mint,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    if ((await connection.getAccountInfo(new PublicKey(account))) === null) return 0n;
    return BigInt((await connection.getTokenAccountBalance(new PublicKey(account))).value.amount);
  }

  for (const [native, hops, legacySigning] of [
    [false, 10, 'partialSign'],
    [true, 6, 'sign'],
  ] as const) {
    test(`${native ? 'native SOL' : 'SPL token'}, ${hops} hops, the legacy transaction signed with ${legacySigning}: from quote to processing, the source paying the estimate`, async () => {
      const wallet = Keypair.generate();
      const source = wallet.publicKey.toBase58() as Address;
      const airdrop = await connection.requestAirdrop(wallet.publicKey, 20_000_000_000);
      await connection.confirmTransaction({ signature: airdrop, ...(await connection.getLatestBlockhash()) });
      if (!native) await t.chain.cheats.setTokenAccount(source, usdc, { amount: 1_000_000_000n });
      const quoted = await quoteRoute(caller, {
        source,
        recipient: Keypair.generate().publicKey.toBase58() as Address,
        hops,
        ...(native ? {} : { mint: usdc }),
      });
      const spent = await expectedLamportsSpent(t, quoted);
      const lamportsBefore = BigInt(await connection.getBalance(wallet.publicKey));
      const tokensBefore = await tokenBalance(wallet.publicKey, quoted.mint);

      const { preparedTxs } = await prepare(caller, quoted.id);
      assert.equal(preparedTxs.routeInitTxs.length, 2, 'CreateRoute, then AddHops');
      const funding = await broadcastWithWeb3js(connection, wallet, preparedTxs, {
        through: 'keeperFunding',
      });
      const intermediate = await confirmBroadcast(caller, quoted.id, {
        keeperFundingSignature: funding.keeperFundingSignature,
        routeInitSignatures: [],
      });
      assert.equal(intermediate.statusCode, 200, intermediate.body);
      assert.deepEqual(
        [intermediate.json().transfer.status, intermediate.json().transfer.phase],
        ['awaiting_signature', 'funding'],
      );
      const rest = await broadcastWithWeb3js(
        connection,
        wallet,
        { ...preparedTxs, keeperFundingTx: null },
        { legacySigning },
      );
      const final = await confirmBroadcast(caller, quoted.id, {
        ...rest,
        keeperFundingSignature: funding.keeperFundingSignature,
      });
      assert.equal(final.statusCode, 200, final.body);
      const transfer = final.json().transfer;
      assert.deepEqual([transfer.status, transfer.phase], ['processing', 'executing']);
      assert.deepEqual(transfer.signatures.routeInit, rest.routeInitSignatures);
      assert.deepEqual(transfer.signatures.sessionInit, rest.sessionInitSignatures);

      assert.equal(lamportsBefore - BigInt(await connection.getBalance(wallet.publicKey)), spent);
      assert.equal(
        tokensBefore - (await tokenBalance(wallet.publicKey, quoted.mint)),
        native ? 0n : quoted.amountRaw,
        native ? 'no wrapped SOL left with the source' : 'the amount moved into the route',
      );
      assert.deepEqual(await eventTypes(t, quoted.id), DEPLOYED_EVENTS);
    });
  }
});
