import type { MintLookup } from '../../../chain/quote-reads.ts';
import { AppError } from '../../../domain/errors.ts';
import { type FeeQuote, type FeeSchedule, mergeFeeSchedule, quoteFees } from '../../../domain/fees.ts';
import type { PriceResolver } from '../../../prices/resolver.ts';
import type { PriceQuote } from '../../../prices/types.ts';
import { NATIVE_SOL_MINT } from '../../../prices/types.ts';
import type { AuthContext } from '../../auth.ts';

/** Looks a mint up on chain; throws when the chain cannot answer. */
export interface MintLookupReader {
  lookupMint(mint: string, options?: { signal?: AbortSignal }): Promise<MintLookup>;
}

export interface PricingDeps {
  mints: MintLookupReader;
  prices: PriceResolver;
  /** The deployment's schedule; an integration's `fees` settings override it. */
  feeSchedule: FeeSchedule;
}

export interface PricingInput {
  tokenMint: string;
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
      {
        param: 'tokenMint',
      },
    );
  }
  if (mint.kind === 'unsupported') {
    throw new AppError('MH_010', `Unsupported token mint ${input.tokenMint}: ${mint.reason}.`, {
      param: 'tokenMint',
    });
  }
  const onChain = mint.decimals;
  if (input.tokenDecimals !== undefined && input.tokenDecimals !== onChain) {
    throw new AppError(
      'MH_016',
      `tokenDecimals is ${input.tokenDecimals} but the mint on chain has ${onChain} decimals. Omit it or send ${onChain}.`,
      { param: 'tokenDecimals' },
    );
  }
  return onChain;
}

/** The fee schedule of an integration: the deployment's with its overrides. */
export function scheduleFor(deps: Pick<PricingDeps, 'feeSchedule'>, auth: AuthContext): FeeSchedule {
  return mergeFeeSchedule(deps.feeSchedule, auth.settings.fees);
}

/** How long a request waits for the chain and price sources before answering MH_091. */
const DEPENDENCY_DEADLINE_MS = 8_000;

/** A signal that fires when a request has waited long enough for its dependencies. */
export function dependencyDeadline(): AbortSignal {
  return AbortSignal.timeout(DEPENDENCY_DEADLINE_MS);
}

/** Resolves decimals, hops and a USD price, then prices the transfer; shared by estimate and create. */
export async function priceRequest(
  deps: PricingDeps,
  auth: AuthContext,
  input: PricingInput,
  signal?: AbortSignal,
): Promise<PricedRequest> {
  const hops = input.hops ?? auth.settings.defaultHops;
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
  const quoted = quoteFees(scheduleFor(deps, auth), {
    amountRaw: input.amountRaw,
    decimals,
    priceUsd: price.priceUsd,
    hops,
  });
  if (!quoted.ok)
    throw new AppError(quoted.error.code, capitalise(quoted.error.message), { param: quoted.error.param });
  return { decimals, hops, price, fees: quoted.value };
}

function capitalise(message: string): string {
  const sentence = message.charAt(0).toUpperCase() + message.slice(1);
  return sentence.endsWith('.') ? sentence : `${sentence}.`;
}
