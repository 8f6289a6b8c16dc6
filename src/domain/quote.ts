import { createHash } from 'node:crypto';
import type { Address } from '@solana/kit';
import { stringify } from 'safe-stable-stringify';
import { rawToTokens, tokensMatchRaw } from './amounts.ts';
import { type FeeQuote, type Result, resolveArrivalSeconds } from './fees.ts';
import type { IntegrationSettings } from './integration.ts';
import type { Transfer } from './transfer.ts';

/** What a create request asks for, as validated at the edge. */
export interface CreateRequest {
  tokenMint: Address;
  amountRaw: bigint;
  amountTokens: string;
  sourceOwner: Address;
  recipientWallet: Address;
  tokenDecimals?: number | undefined;
  tokenSymbol?: string | undefined;
  hops?: number | undefined;
  arrivalSeconds?: number | undefined;
  externalId?: string | undefined;
  tokenPriceUsd?: number | undefined;
}

/** A create request with the integration's defaults applied. */
export interface CreateTerms {
  request: CreateRequest;
  hops: number;
  arrivalSeconds: number;
  /**
   * What makes two creates with one externalId "the same" (decision C6): a digest of the
   * parameters after defaults apply, so omitting a default and sending it are the same request.
   */
  fingerprint: Buffer;
}

/** Applies the integration's defaults for hops and arrival; `MH_014`/`MH_016` for an arrival out of range. */
export function resolveCreateTerms(
  request: CreateRequest,
  settings: IntegrationSettings,
): Result<CreateTerms> {
  const hops = request.hops ?? settings.defaultHops;
  const arrival = resolveArrivalSeconds(hops, request.arrivalSeconds, settings.defaultArrivalSeconds);
  if (!arrival.ok) return arrival;
  const fingerprint = createHash('sha256')
    .update(
      stringify({
        tokenMint: request.tokenMint,
        amountRaw: request.amountRaw.toString(),
        sourceOwner: request.sourceOwner,
        recipientWallet: request.recipientWallet,
        hops,
        arrivalSeconds: arrival.value,
        tokenDecimals: request.tokenDecimals ?? null,
        tokenSymbol: request.tokenSymbol ?? null,
        tokenPriceUsd: request.tokenPriceUsd ?? null,
      }) ?? '',
    )
    .digest();
  return { ok: true, value: { request, hops, arrivalSeconds: arrival.value, fingerprint } };
}

/** A priced quote, ready to be stored: everything the transfer row holds at creation. */
export type NewQuote = Pick<
  Transfer,
  | 'externalId'
  | 'tokenMint'
  | 'tokenSymbol'
  | 'tokenDecimals'
  | 'amountRaw'
  | 'amountTokens'
  | 'sourceOwner'
  | 'recipientWallet'
  | 'hops'
  | 'arrivalSeconds'
  | 'tokenPriceUsd'
  | 'priceSource'
  | 'usdEquivalent'
  | 'pricingTier'
  | 'percentFeeBps'
  | 'percentFeeRaw'
  | 'integratorPercentShareRaw'
  | 'netDeliveredRaw'
  | 'flatFeeLamportsPerHop'
  | 'totalFlatFeeLamports'
  | 'integratorFlatShareLamports'
  | 'quotedAt'
  | 'expiresAt'
> & { fingerprint: Buffer };

/**
 * The quote of a create: its terms, the mint's decimals, the price used and the fees, locked until
 * `quotedAt + ttlMs`. `MH_016` when `amountTokens` does not state `amountRaw` at those decimals.
 */
export function buildQuote(input: {
  terms: CreateTerms;
  decimals: number;
  price: { priceUsd: string; source: string };
  fees: FeeQuote;
  quotedAt: Date;
  ttlMs: number;
}): Result<NewQuote> {
  const { terms, fees, quotedAt, decimals } = input;
  const { request } = terms;
  if (!tokensMatchRaw(request.amountTokens, request.amountRaw, decimals)) {
    return {
      ok: false,
      error: {
        code: 'MH_016',
        param: 'amountTokens',
        message: `amountTokens "${request.amountTokens}" does not equal amountRaw ${request.amountRaw} at ${decimals} decimals (expected "${rawToTokens(request.amountRaw, decimals)}")`,
      },
    };
  }
  const quote: NewQuote = {
    externalId: request.externalId ?? null,
    fingerprint: terms.fingerprint,
    tokenMint: request.tokenMint,
    tokenSymbol: request.tokenSymbol ?? null,
    tokenDecimals: decimals,
    amountRaw: request.amountRaw,
    amountTokens: rawToTokens(request.amountRaw, decimals),
    sourceOwner: request.sourceOwner,
    recipientWallet: request.recipientWallet,
    hops: terms.hops,
    arrivalSeconds: terms.arrivalSeconds,
    tokenPriceUsd: input.price.priceUsd,
    priceSource: input.price.source,
    usdEquivalent: fees.usdEquivalent,
    pricingTier: fees.tier,
    percentFeeBps: fees.percentFeeBps,
    percentFeeRaw: fees.percentFeeRaw,
    integratorPercentShareRaw: fees.integratorPercentShareRaw,
    netDeliveredRaw: fees.netDeliveredRaw,
    flatFeeLamportsPerHop: fees.flatFeeLamportsPerHop,
    totalFlatFeeLamports: fees.totalFlatFeeLamports,
    integratorFlatShareLamports: fees.integratorFlatShareLamports,
    quotedAt,
    expiresAt: new Date(quotedAt.getTime() + input.ttlMs),
  };
  return { ok: true, value: quote };
}
