import assert from 'node:assert/strict';
import { type Address, generateKeyPairSigner, type KeyPairSigner } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { rawToTokens } from '../../src/domain/amounts.ts';
import type { Caller, TestApp } from './app.ts';
import { SOL_MINT } from './app.ts';
import { type Bundle, broadcastBundle } from './wallet.ts';

/** A quoted transfer with its funded source wallet, its recipient and the estimate it was priced with. */
export interface QuotedRoute {
  id: number;
  source: KeyPairSigner;
  recipient: Address;
  mint: Address;
  amountRaw: bigint;
  estimate: {
    sol: { requiredSolUpFrontLamports: number; refundableLamports: number };
    tokens: { netDeliveredRaw: string; feeRaw: string; decimals: number };
    totalFlatFeeLamports: number;
  };
}

/**
 * A source wallet funded with SOL (and tokens of an SPL mint), a recipient, an estimate, a created
 * transfer; the source and recipient are fresh unless given.
 */
export async function quoteRoute(
  t: TestApp,
  caller: Caller,
  options: {
    hops: number;
    mint: Address;
    arrivalSeconds?: number;
    amountRaw?: bigint;
    source?: KeyPairSigner;
    recipient?: Address;
  },
): Promise<QuotedRoute> {
  const native = options.mint === SOL_MINT;
  const source = options.source ?? (await generateKeyPairSigner());
  const recipient = options.recipient ?? (await generateKeyPairSigner()).address;
  const amountRaw = options.amountRaw ?? (native ? 2_000_000_000n : 250_000_000n);
  await t.chain.cheats.airdrop(source.address, 50_000_000_000n);
  if (!native) await t.chain.cheats.setTokenAccount(source.address, options.mint, { amount: amountRaw * 4n });
  const terms = {
    tokenMint: options.mint,
    amountRaw: amountRaw.toString(),
    hops: options.hops,
    ...(native ? {} : { tokenPriceUsd: 1 }),
  };
  const estimate = (await caller.post('/api/v1/transfers/estimate', terms)).json();
  const created = await caller.post('/api/v1/transfers', {
    ...terms,
    amountTokens: rawToTokens(amountRaw, estimate.tokens.decimals),
    sourceOwner: source.address,
    recipientWallet: recipient,
    ...(options.arrivalSeconds ? { arrivalSeconds: options.arrivalSeconds } : {}),
  });
  assert.equal(created.statusCode, 200, created.body);
  return { id: created.json().id, source, recipient, mint: options.mint, amountRaw, estimate };
}

/** Prepares, broadcasts every group and makes both confirm calls, as an integrator does. */
export async function deployRoute(t: TestApp, caller: Caller, route: QuotedRoute) {
  const prepared = await caller.post(`/api/v1/transfers/${route.id}/prepare`);
  assert.equal(prepared.statusCode, 200, prepared.body);
  const bundle = prepared.json().preparedTxs as Bundle;
  const funding = await broadcastBundle(t.chain.chain, route.source, bundle, { through: 'keeperFunding' });
  const first = await caller.post(`/api/v1/transfers/${route.id}/confirm-broadcast`, {
    keeperFundingSignature: funding.keeperFundingSignature,
    routeInitSignatures: [],
  });
  assert.equal(first.statusCode, 200, first.body);
  const rest = await broadcastBundle(t.chain.chain, route.source, { ...bundle, keeperFundingTx: null });
  const final = await caller.post(`/api/v1/transfers/${route.id}/confirm-broadcast`, {
    ...rest,
    keeperFundingSignature: funding.keeperFundingSignature,
  });
  assert.equal(final.statusCode, 200, final.body);
  assert.equal(final.json().transfer.status, 'processing');
  return final.json().transfer;
}

/** The owner's balance of a mint in its associated token account (0 when it has none). */
export async function tokenBalance(t: TestApp, owner: Address, mint: Address): Promise<bigint> {
  const [account] = await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  return (await t.chain.chain.getTokenAccount(account))?.amount ?? 0n;
}
