// What route tests do as an integrator: fund a source wallet, estimate and create its transfer,
// prepare, confirm the broadcast; and what they read back: balances and the transfer's events.
import assert from 'node:assert/strict';
import { type Address, generateKeyPairSigner, type KeyPairSigner } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { type Caller, SOL_MINT, type TestApp } from '../helpers/app.ts';
import type { Bundle } from '../helpers/wallet.ts';

/** Rate limits far above what a test sends. */
export const UNLIMITED = { rateLimitMultiplier: 1000 };

/** The estimate's figures the tests check balances against. */
export interface Estimate {
  sol: { requiredSolUpFrontLamports: number; refundableLamports: number };
  tokens: { netDeliveredRaw: string };
}

/** A created transfer and the estimate made for the same terms just before. */
export interface Quoted {
  id: number;
  mint: Address;
  amountRaw: bigint;
  estimate: Estimate;
}

/** A transfer's terms: a native SOL route of 2 SOL, or 250 tokens of a 6-decimal mint. */
export function routeTerms(options: { hops: number; mint?: Address }) {
  const native = options.mint === undefined;
  return {
    tokenMint: (options.mint ?? SOL_MINT) as Address,
    amountRaw: native ? '2000000000' : '250000000',
    amountTokens: native ? '2' : '250',
    hops: options.hops,
    ...(native ? {} : { tokenPriceUsd: 1 }),
  };
}

/** Airdrops lamports to a source and, for a token route, gives it `tokens` of the mint. */
export async function fundSource(
  t: Pick<TestApp, 'chain'>,
  source: Address,
  options: { lamports: bigint; mint?: Address; tokens?: bigint },
): Promise<void> {
  await t.chain.cheats.airdrop(source, options.lamports);
  if (options.mint) await t.chain.cheats.setTokenAccount(source, options.mint, { amount: options.tokens });
}

/** Estimates, then creates a transfer from `source` to `recipient` with the same terms. */
export async function quoteRoute(
  caller: Caller,
  input: { source: Address; recipient: Address; hops: number; mint?: Address },
): Promise<Quoted> {
  const { amountTokens, ...terms } = routeTerms(input);
  const estimate = await caller.post('/api/v1/transfers/estimate', terms);
  assert.equal(estimate.statusCode, 200, estimate.body);
  const created = await caller.post('/api/v1/transfers', {
    ...terms,
    amountTokens,
    sourceOwner: input.source,
    recipientWallet: input.recipient,
  });
  assert.equal(created.statusCode, 200, created.body);
  return {
    id: created.json().id,
    mint: terms.tokenMint,
    amountRaw: BigInt(terms.amountRaw),
    estimate: estimate.json(),
  };
}

/** A fresh source holding 20 SOL and 1,000 tokens of `mint`, and its transfer of 250 of them. */
export async function quotedTokenRoute(
  t: Pick<TestApp, 'chain'>,
  caller: Caller,
  mint: Address,
  hops = 3,
): Promise<Quoted & { source: KeyPairSigner }> {
  const source = await generateKeyPairSigner();
  await fundSource(t, source.address, { lamports: 20_000_000_000n, mint, tokens: 1_000_000_000n });
  const recipient = (await generateKeyPairSigner()).address;
  return { source, ...(await quoteRoute(caller, { source: source.address, recipient, hops, mint })) };
}

/** Prepares a transfer's bundle, asserting the call succeeded. */
export async function prepare(caller: Caller, id: number, headers?: Record<string, string>) {
  const response = await caller.post(`/api/v1/transfers/${id}/prepare`, undefined, headers);
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as { transfer: { status: string; phase: string }; preparedTxs: Bundle };
}

/** Calls confirm-broadcast with a report of signatures. */
export const confirmBroadcast = (caller: Caller, id: number, body: object) =>
  caller.post(`/api/v1/transfers/${id}/confirm-broadcast`, body);

/** A wallet's lamports on the test chain. */
export const lamportsOf = async (t: Pick<TestApp, 'chain'>, address: Address) =>
  BigInt(await t.chain.chain.getBalance(address));

/** A wallet's balance in its associated token account of `mint` (0 without one). */
export async function tokensOf(t: Pick<TestApp, 'chain'>, owner: Address, mint: Address) {
  const [account] = await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  return (await t.chain.chain.getTokenAccount(account))?.amount ?? 0n;
}

/**
 * The lamports the source spends deploying a route, from the estimate: it counts the platform's
 * fee account for the mint in full, but only the first route of a mint has its bundle create it;
 * a native route also moves the amount. Read before the deployment.
 */
export async function expectedLamportsSpent(t: Pick<TestApp, 'chain' | 'platform'>, quoted: Quoted) {
  const [feeAccount] = await findAssociatedTokenPda({
    owner: t.platform.configAddress,
    mint: quoted.mint,
    tokenProgram: TOKEN_PROGRAM_ADDRESS,
  });
  const feeAccountExists = (await t.chain.chain.getAccount(feeAccount)) !== null;
  const tokenRent = BigInt(await t.chain.chain.getMinimumBalanceForRentExemption(165));
  const required =
    BigInt(quoted.estimate.sol.requiredSolUpFrontLamports) - (feeAccountExists ? tokenRent : 0n);
  return quoted.mint === SOL_MINT ? required + quoted.amountRaw : required;
}

/** The types of a transfer's events in the outbox, in order. */
export async function eventTypes(t: Pick<TestApp, 'database'>, id: number): Promise<string[]> {
  const { rows } = await t.database.db.query<{ type: string }>(
    'SELECT type FROM events WHERE transfer_id = $1 ORDER BY sequence',
    [id],
  );
  return rows.map((row) => row.type);
}

/** The events a route's deployment writes, from the quote to the takeover. */
export const DEPLOYED_EVENTS = [
  'transfer.quote_created',
  'transfer.phase_changed',
  'transfer.deposit_confirmed',
  'transfer.processing',
  'transfer.phase_changed',
];
