import type { Address } from '@solana/kit';
import type { MintLookup } from '../chain/quote-reads.ts';
import { AppError, issueError } from '../domain/errors.ts';
import { type FeeQuote, type FeeSchedule, mergeFeeSchedule, quoteFees } from '../domain/fees.ts';
import type { IntegrationSettings } from '../domain/integration.ts';
import type { SolCosts } from '../domain/sol-costs.ts';
import type { PriceResolver } from '../prices/resolver.ts';
import type { PriceQuote } from '../prices/types.ts';
import { NATIVE_SOL_MINT } from '../prices/types.ts';

/** Looks a mint up on chain; throws when the chain cannot answer. */
export interface MintLookupReader {
  lookupMint(mint: Address, options?: { signal?: AbortSignal }): Promise<MintLookup>;
}

/** Prices the SOL side of a route of `hops` hops for a mint from real rent and account sizes. */
export interface SolCostEstimator {
  estimate(
    input: { hops: number; protocolFlatFeeLamports: bigint; mint: Address },
    signal?: AbortSignal,
  ): Promise<SolCosts>;
}

export interface PricingDeps {
  mints: MintLookupReader;
  prices: PriceResolver;
  /** The deployment's schedule; an integration's `fees` settings override it. */
  feeSchedule: FeeSchedule;
}

export interface PricingInput {
  tokenMint: Address;
  amountRaw: bigint;
  tokenDecimals?: number | undefined;
  tokenPriceUsd?: number | undefined;
  hops?: number | undefined;
}

export interface PricedRequest {
  decimals: number;
  hops: number;
  price: PriceQuote;
  fees: FeeQuote;
}

/**
 * The least a native SOL route may deliver: the last hop pays the recipient's wallet in lamports,
 * and a wallet that does not exist yet must end rent exempt (the router program refuses less).
 * The rent-exempt minimum of an empty account, the same on every cluster.
 */
const MIN_NATIVE_DELIVERY_LAMPORTS = 890_880n;

/** How long a request waits for the chain and price sources before answering MH_091. */
const DEPENDENCY_DEADLINE_MS = 8_000;

/** A signal that fires when a request has waited long enough for its dependencies. */
export function dependencyDeadline(): AbortSignal {
  return AbortSignal.timeout(DEPENDENCY_DEADLINE_MS);
}

/**
 * Decimals per decision C4: the mint on chain decides; a given `tokenDecimals` must agree with it;
 * when the chain cannot answer, the given value or the default (9 for the native mint, 6 otherwise).
 */
async function resolveDecimals(
  deps: PricingDeps,
  input: PricingInput,
  signal?: AbortSignal,
): Promise<number> {
  let mint: MintLookup;
  try {
    mint = await deps.mints.lookupMint(input.tokenMint, signal ? { signal } : {});
  } catch {
    return input.tokenDecimals ?? (input.tokenMint === NATIVE_SOL_MINT ? 9 : 6);
  }
  if (mint.kind === 'missing') {
    throw new AppError(
      'MH_010',
      `Unsupported token mint: no mint account exists at ${input.tokenMint} on this cluster.`,
      { param: 'tokenMint' },
    );
  }
  if (mint.kind === 'unsupported') {
    throw new AppError('MH_010', `Unsupported token mint ${input.tokenMint}: ${mint.reason}.`, {
      param: 'tokenMint',
    });
  }
  if (input.tokenDecimals !== undefined && input.tokenDecimals !== mint.decimals) {
    throw new AppError(
      'MH_016',
      `tokenDecimals is ${input.tokenDecimals} but the mint on chain has ${mint.decimals} decimals. Omit it or send ${mint.decimals}.`,
      { param: 'tokenDecimals' },
    );
  }
  return mint.decimals;
}

/**
 * Prices a transfer for an integration: the mint's decimals from the chain, a USD price, then the
 * fees of the integration's schedule. Shared by estimate and create.
 */
export async function priceRequest(
  deps: PricingDeps,
  settings: IntegrationSettings,
  input: PricingInput,
  signal?: AbortSignal,
): Promise<PricedRequest> {
  const hops = input.hops ?? settings.defaultHops;
  const [decimals, price] = await Promise.all([
    resolveDecimals(deps, input, signal),
    deps.prices.resolveUsdPrice(input.tokenMint, {
      ...(input.tokenPriceUsd === undefined ? {} : { tokenPriceUsd: input.tokenPriceUsd }),
      ...(signal ? { signal } : {}),
    }),
  ]);
  if (!price) {
    throw new AppError(
      'MH_010',
      `No USD price is available for mint ${input.tokenMint}. Pass tokenPriceUsd with the request.`,
      { param: 'tokenPriceUsd' },
    );
  }
  const quoted = quoteFees(mergeFeeSchedule(deps.feeSchedule, settings.fees), {
    amountRaw: input.amountRaw,
    decimals,
    priceUsd: price.priceUsd,
    hops,
  });
  if (!quoted.ok) throw issueError(quoted.error);
  if (input.tokenMint === NATIVE_SOL_MINT && quoted.value.netDeliveredRaw < MIN_NATIVE_DELIVERY_LAMPORTS) {
    throw new AppError(
      'MH_012',
      `Amount is too small: a SOL transfer must deliver at least ${MIN_NATIVE_DELIVERY_LAMPORTS} lamports after fees (a wallet's rent-exempt minimum).`,
      { param: 'amountRaw' },
    );
  }
  return { decimals, hops, price, fees: quoted.value };
}
