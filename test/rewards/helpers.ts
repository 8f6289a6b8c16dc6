// What rewards tests do: carry transfers to settlement as an integrator and the keeper would, and
// read what the integrator's shares of them were quoted as.
import assert from 'node:assert/strict';
import type { Address } from '@solana/kit';
import type { Caller, TestApp } from '../helpers/app.ts';
import { deployRoute, quoteRoute } from '../helpers/route.ts';

/** Rate limits far above what a test sends. */
export const UNLIMITED = { rateLimitMultiplier: 1000 };

/** A settled transfer and the integrator's shares its estimate quoted. */
export interface Settled {
  id: number;
  mint: Address;
  percentShareRaw: bigint;
  flatShareLamports: bigint;
}

/**
 * Quotes, deploys and runs a 3-hop route of `mint` to settlement: the chain's clock moves past
 * its arrival time and the keeper runs each hop.
 */
export async function settleRoute(
  t: TestApp,
  caller: Caller,
  mint: Address,
  options: { amountRaw?: bigint } = {},
): Promise<Settled> {
  const route = await quoteRoute(t, caller, {
    hops: 3,
    mint,
    arrivalSeconds: 60,
    ...(options.amountRaw ? { amountRaw: options.amountRaw } : {}),
  });
  const deployedAt = (await t.chain.chain.getClock()).unixTimestamp;
  await deployRoute(t, caller, route);
  await t.chain.cheats.timeTravel({ absoluteTimestamp: Number(deployedAt + 61n) * 1000 });
  for (let hop = 0; hop < 3; hop++) await t.keeper.runOnce();
  const transfer = (await caller.get(`/api/v1/transfers/${route.id}`)).json();
  assert.equal(transfer.status, 'completed', JSON.stringify(transfer));
  const estimate = route.estimate as unknown as {
    integratorPercentShare: string;
    integratorFlatShare: number;
  };
  return {
    id: route.id,
    mint,
    percentShareRaw: BigInt(estimate.integratorPercentShare),
    flatShareLamports: BigInt(estimate.integratorFlatShare),
  };
}

/** Sums the shares of settled transfers: lamports, and raw units per mint. */
export function sharesOf(settled: readonly Settled[]) {
  const byMint = new Map<Address, bigint>();
  for (const transfer of settled)
    byMint.set(transfer.mint, (byMint.get(transfer.mint) ?? 0n) + transfer.percentShareRaw);
  return {
    lamports: settled.reduce((sum, transfer) => sum + transfer.flatShareLamports, 0n),
    byMint,
  };
}
