import {
  type Address,
  createSolanaRpc,
  createSolanaRpcSubscriptions,
  generateKeyPairSigner,
  type KeyPairSigner,
} from '@solana/kit';
import {
  createTransferRouterClient,
  type TransferRouterClient,
  type TransferRouterClientOptions,
} from '../../clients/typescript/src/index.ts';
import { rawToTokens } from '../../src/domain/amounts.ts';
import type { Caller, TestApp } from '../helpers/app.ts';
import { SOL_MINT } from '../helpers/app.ts';
import { tokenBalance } from '../helpers/route.ts';

/** The app listening on a real port of 127.0.0.1, as integrators reach the service. */
export async function listen(t: TestApp): Promise<string> {
  return t.app.listen({ port: 0, host: '127.0.0.1' });
}

/**
 * Stops the service as an outage would: its API stops answering and its keeper stops (tests run
 * workers only through `runOnce`, so no other worker runs); the chain and its RPC endpoint stay.
 */
export async function stopService(t: TestApp): Promise<void> {
  await t.app.close();
  await t.keeper.stop();
}

/** A client of the listening app with `caller`'s key. */
export function clientFor(
  baseUrl: string,
  caller: Caller,
  options: Partial<TransferRouterClientOptions> = {},
): TransferRouterClient {
  return createTransferRouterClient({ baseUrl, apiKey: caller.key, ...options });
}

/** @solana/kit's RPC and subscriptions on the test chain's JSON-RPC endpoint, as a wallet uses them. */
export function kitRpc(t: TestApp) {
  return {
    rpc: createSolanaRpc(t.chain.rpcUrl),
    rpcSubscriptions: createSolanaRpcSubscriptions(t.chain.wsUrl),
  };
}

/** A fresh source wallet with SOL and, for an SPL mint, `tokens` of it. */
export async function fundedWallet(t: TestApp, mint: Address, tokens: bigint): Promise<KeyPairSigner> {
  const wallet = await generateKeyPairSigner();
  await t.chain.cheats.airdrop(wallet.address, 50_000_000_000n);
  if (mint !== SOL_MINT) await t.chain.cheats.setTokenAccount(wallet.address, mint, { amount: tokens });
  return wallet;
}

/**
 * A source funded with SOL and the amount (2 SOL, or 250 tokens of an SPL mint at $1), a fresh
 * recipient, the estimate and the transfer created with the client.
 */
export async function quoteWithClient(
  t: TestApp,
  client: TransferRouterClient,
  route: { mint: Address; hops: number; arrivalSeconds: number },
) {
  const native = route.mint === SOL_MINT;
  const amountRaw = native ? 2_000_000_000n : 250_000_000n;
  const source = await fundedWallet(t, route.mint, amountRaw);
  const recipient = (await generateKeyPairSigner()).address;
  const terms = {
    tokenMint: route.mint,
    amountRaw: String(amountRaw),
    hops: route.hops,
    ...(native ? {} : { tokenPriceUsd: 1 }),
  };
  const estimate = await client.estimateTransfer(terms);
  const created = await client.createTransfer({
    ...terms,
    amountTokens: rawToTokens(amountRaw, estimate.tokens.decimals),
    sourceOwner: source.address,
    recipientWallet: recipient,
    arrivalSeconds: route.arrivalSeconds,
  });
  return { id: created.id, created, estimate, source, recipient, mint: route.mint, hops: route.hops };
}

/** What an owner holds of `mint`: tokens in its associated account, or lamports for native SOL. */
export async function holding(t: TestApp, owner: Address, mint: Address): Promise<bigint> {
  return mint === SOL_MINT ? BigInt(await t.chain.chain.getBalance(owner)) : tokenBalance(t, owner, mint);
}

/**
 * Runs a deployed route's hops as the keeper network does, moving the chain's clock to each hop's
 * due time (the route's schedule: `interval` seconds apart from `deployedAt`).
 */
export async function runHops(
  t: TestApp,
  route: { id: number; hops: number; arrivalSeconds: number; deployedAt: bigint },
  each: { before?: () => unknown; after?: () => Promise<unknown> } = {},
) {
  const interval = BigInt(Math.floor(route.arrivalSeconds / route.hops));
  for (let hop = 1; hop <= route.hops; hop++) {
    const due = route.deployedAt + BigInt(hop) * interval;
    await t.chain.cheats.timeTravel({ absoluteTimestamp: Number(due) * 1000 });
    await each.before?.();
    // Routes of earlier tests may fall due on the same clock: they run too.
    await t.keeper.runOnce();
    const { rows } = await t.database.db.query<{ hops_completed: number }>(
      'SELECT hops_completed FROM transfers WHERE id = $1',
      [route.id],
    );
    if (rows[0]?.hops_completed !== hop)
      throw new Error(`hop ${hop} of transfer ${route.id} did not run when due`);
    await each.after?.();
  }
}
