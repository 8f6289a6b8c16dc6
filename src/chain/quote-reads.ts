import type { Address } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import {
  hopBudgetPrice,
  hopPriorityBudgetLamports,
  type PriorityFeePolicy,
} from '../domain/priority-fees.ts';
import { LAMPORTS_PER_SIGNATURE, priorityFeeLamports } from '../domain/route.ts';
import type { SolCosts } from '../domain/sol-costs.ts';
import { ChainError } from './errors.ts';
import { isNativeMint } from './router/accounts.ts';
import { COMPUTE_UNIT_LIMITS, routeFootprint } from './router/footprint.ts';
import type { MintReader, RentReader } from './types.ts';

const RENT_CACHE_MS = 10 * 60_000;
const MAX_CACHED_MINTS = 10_000;

/** What quoting needs to know of a mint: its decimals, and whether the router can move its tokens. */
export type MintLookup =
  | { kind: 'mint'; decimals: number }
  | { kind: 'missing' }
  | { kind: 'unsupported'; reason: string };

/**
 * Mints for quoting, cached: a mint's decimals and token program never change, so one chain read
 * per mint is enough. Throws when the chain cannot answer (the caller then falls back to a
 * default).
 */
export function createMintLookup(chain: MintReader) {
  const known = new Map<Address, MintLookup>();
  return {
    async lookupMint(mint: Address, options: { signal?: AbortSignal } = {}): Promise<MintLookup> {
      const cached = known.get(mint);
      if (cached) return cached;
      let result: MintLookup;
      try {
        const info = await chain.getMint(mint, options);
        result =
          info.programAddress === TOKEN_PROGRAM_ADDRESS
            ? { kind: 'mint', decimals: info.decimals }
            : {
                kind: 'unsupported',
                reason: 'only SPL Token mints are supported (this mint belongs to another token program)',
              };
      } catch (error) {
        if (!(error instanceof ChainError)) throw error;
        if (error.code === 'CHAIN_ACCOUNT_NOT_FOUND') result = { kind: 'missing' };
        else if (error.code === 'CHAIN_INVALID_ACCOUNT')
          result = { kind: 'unsupported', reason: 'the account is not a token mint' };
        else throw error;
      }
      // Only a found mint is remembered: an address without one may get a mint later.
      if (result.kind === 'mint') {
        if (known.size >= MAX_CACHED_MINTS) known.clear();
        known.set(mint, result);
      }
      return result;
    },
  };
}

/**
 * The SOL side of the fee estimate from the chain's real rent figures (cached briefly: the rent
 * sysvar practically never changes) and the router's real account sizes. Give the route's `mint`:
 * a native-mint route has no recipient token account to pay for (without it the estimate is an
 * SPL route's). Prices are the floor's: the bundle's transactions at it, and the keeper's fee
 * budget sized from it, of which what hops landing at the floor leave unspent comes back.
 */
export function createSolCostEstimator(deps: {
  chain: RentReader;
  priorityFees: PriorityFeePolicy;
  now?: () => number;
}) {
  const now = deps.now ?? Date.now;
  const rents = new Map<number, { lamports: bigint; until: number }>();
  async function rent(size: number, signal?: AbortSignal): Promise<bigint> {
    const cached = rents.get(size);
    if (cached && cached.until > now()) return cached.lamports;
    const lamports = BigInt(
      await deps.chain.getMinimumBalanceForRentExemption(size, signal ? { signal } : {}),
    );
    rents.set(size, { lamports, until: now() + RENT_CACHE_MS });
    return lamports;
  }

  return {
    async estimate(
      input: { hops: number; protocolFlatFeeLamports: bigint; mint: Address },
      signal?: AbortSignal,
    ): Promise<SolCosts> {
      const footprint = routeFootprint({
        hops: input.hops,
        native: isNativeMint(input.mint),
      });
      const sizes = [
        ...new Set([
          ...footprint.routeInitAccountSizes,
          footprint.orchestratorAccountSize,
          footprint.tokenAccountSize,
        ]),
      ];
      const rentBySize = new Map(
        await Promise.all(sizes.map(async (size) => [size, await rent(size, signal)] as const)),
      );
      const rentOf = (size: number) => rentBySize.get(size)!;
      const routeInitRentLamports = footprint.routeInitAccountSizes.reduce(
        (sum, size) => sum + rentOf(size),
        0n,
      );
      const orchestratorRentLamports = rentOf(footprint.orchestratorAccountSize);
      const tokenAccountRent = rentOf(footprint.tokenAccountSize);
      const price = deps.priorityFees.floorMicroLamportsPerCu;
      const hopBudget = hopPriorityBudgetLamports({
        hops: input.hops,
        hopComputeUnitLimit: COMPUTE_UNIT_LIMITS.executeStep,
        budgetMicroLamportsPerCu: hopBudgetPrice(price, deps.priorityFees),
      });
      const hopsAtFloor = BigInt(input.hops) * priorityFeeLamports(COMPUTE_UNIT_LIMITS.executeStep, price);
      const priorityFeesLamports = priorityFeeLamports(footprint.bundleComputeUnits, price) + hopBudget;
      return {
        breakdown: {
          routeInitRentLamports,
          orchestratorRentLamports,
          ataRentLamports: tokenAccountRent * BigInt(footprint.tokenAccounts),
          transactionFeesLamports: LAMPORTS_PER_SIGNATURE * BigInt(footprint.signatures),
          priorityFeesLamports,
          protocolFlatFeeLamports: input.protocolFlatFeeLamports,
        },
        refundableLamports:
          routeInitRentLamports +
          orchestratorRentLamports +
          tokenAccountRent * BigInt(footprint.refundableTokenAccounts) +
          LAMPORTS_PER_SIGNATURE * BigInt(footprint.refundableSignatures) +
          hopBudget -
          hopsAtFloor,
      };
    },
  };
}
