import type { Address } from '@solana/kit';
import type { MintLookup } from '../chain/quote-reads.ts';
import type { Clock } from '../domain/clock.ts';
import { AppError, issueError } from '../domain/errors.ts';
import { type FeeQuote, type FeeSchedule, mergeFeeSchedule, quoteFees } from '../domain/fees.ts';
import type { IntegrationSettings, Owner } from '../domain/integration.ts';
import { buildQuote, type CreateRequest, resolveCreateTerms } from '../domain/quote.ts';
import { type SolCosts, summariseSolCosts } from '../domain/sol-costs.ts';
import type { Transfer } from '../domain/transfer.ts';
import type { PriceResolver } from '../prices/resolver.ts';
import type { PriceQuote } from '../prices/types.ts';
import { NATIVE_SOL_MINT } from '../prices/types.ts';
import type { TransferStore } from '../store/transfers.ts';
import type { Commit } from './commit.ts';
import { dependencyDeadline } from './deadline.ts';

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
async function priceRequest(
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

/** A fee estimate: the transfer priced, and the SOL the source needs up front. */
export interface Estimate {
  priced: PricedRequest;
  sol: ReturnType<typeof summariseSolCosts>;
}

/** Estimate: fees in tokens and SOL for an integration, without creating anything. */
export async function estimateFees(
  deps: PricingDeps & { solCosts: SolCostEstimator },
  settings: IntegrationSettings,
  input: PricingInput,
): Promise<Estimate> {
  const signal = dependencyDeadline();
  const priced = await priceRequest(deps, settings, input, signal);
  const costs = await deps.solCosts.estimate(
    { hops: priced.hops, protocolFlatFeeLamports: priced.fees.totalFlatFeeLamports, mint: input.tokenMint },
    signal,
  );
  return { priced, sol: summariseSolCosts(costs) };
}

export type CreateQuoteDeps = PricingDeps & {
  transfers: Pick<TransferStore, 'matchExternalId' | 'insertQuote'>;
  clock: Clock;
  quoteTtlMs: number;
};

/**
 * Create: a quote with its pricing locked until `expiresAt`. A create repeating an `externalId`
 * with the same parameters answers the existing transfer before pricing again (which could fail or
 * differ); other parameters are MH_033.
 */
export async function createQuote<R>(
  deps: CreateQuoteDeps,
  caller: { owner: Owner; settings: IntegrationSettings },
  request: CreateRequest & { externalId?: string | undefined },
  commit: Commit<Transfer, R>,
): Promise<R> {
  const { owner, settings } = caller;
  const terms = resolveCreateTerms(request, settings);
  if (!terms.ok) throw issueError(terms.error);
  const externalId = request.externalId ?? null;
  const repeated = await deps.transfers.matchExternalId(owner, externalId, terms.value.fingerprint);
  if (repeated?.kind === 'existing') return commit(async () => repeated.transfer);
  if (repeated?.kind === 'conflict') throw duplicate(externalId);

  const priced = await priceRequest(
    deps,
    settings,
    { ...request, hops: terms.value.hops },
    dependencyDeadline(),
  );
  const quote = buildQuote({
    terms: terms.value,
    decimals: priced.decimals,
    price: priced.price,
    fees: priced.fees,
    quotedAt: deps.clock.now(),
    ttlMs: deps.quoteTtlMs,
  });
  if (!quote.ok) throw issueError(quote.error);
  return commit(async (tx) => {
    const result = await deps.transfers.insertQuote(tx, owner, quote.value);
    if (result.kind === 'conflict') throw duplicate(externalId);
    return result.transfer;
  });
}

/** MH_033: the externalId names a transfer with other parameters. */
function duplicate(externalId: string | null) {
  return new AppError(
    'MH_033',
    `A transfer with externalId "${externalId}" already exists with different parameters. Use a new externalId or repeat the original request exactly.`,
    { param: 'externalId' },
  );
}
