import { decimalFromNumber, formatDecimal } from '../domain/amounts.ts';
import type { Clock } from '../domain/clock.ts';
import { createCachedPriceSource } from './cache.ts';
import { type CoinGeckoOptions, createCoinGeckoSource } from './coingecko.ts';
import { createFallbackPriceSource } from './fallback.ts';
import { createFixedPriceSource } from './fixed.ts';
import { createJupiterSource, type JupiterOptions } from './jupiter.ts';
import type { PriceLog, PriceQuote, PriceSource } from './types.ts';

/** What the service asks for a USD price. */
export interface PriceResolver {
  /**
   * The USD price of one whole token of `mint`: the client's `tokenPriceUsd` when given (it wins),
   * else the first fresh answer of the configured sources; null means `MH_010`. Rejects only when
   * `signal` aborts. `tokenPriceUsd` must be a finite number >= 0 (validate it at the edge).
   */
  resolveUsdPrice(
    mint: string,
    options?: { readonly tokenPriceUsd?: number; readonly signal?: AbortSignal },
  ): Promise<PriceQuote | null>;
}

/** A resolver over one (usually composite) source. */
export function createPriceResolver({ source, clock }: { source: PriceSource; clock: Clock }): PriceResolver {
  return {
    async resolveUsdPrice(mint, { tokenPriceUsd, signal } = {}) {
      if (tokenPriceUsd !== undefined) {
        const decimal = decimalFromNumber(tokenPriceUsd);
        if (!decimal) throw new RangeError('tokenPriceUsd must be a finite number >= 0');
        return { mint, priceUsd: formatDecimal(decimal), source: 'client', observedAt: clock.now() };
      }
      signal?.throwIfAborted();
      return source.getUsdPrice(mint, { signal });
    },
  };
}

/** Names accepted in the `PRICE_SOURCES` setting. */
export const PRICE_SOURCE_NAMES = ['coingecko', 'jupiter', 'fixed'] as const;
export type PriceSourceName = (typeof PRICE_SOURCE_NAMES)[number];

/** The price settings of a deployment (see docs/pricing.md for the environment names). */
export interface PriceConfig {
  /** Sources in fallback order. */
  readonly sources: readonly PriceSourceName[];
  /** Extra or overriding entries of the fixed table (mint -> exact USD decimal string). */
  readonly fixedPrices?: Readonly<Record<string, string>>;
  readonly cacheTtlMs?: number;
  readonly maxAgeMs?: number;
  readonly timeoutMs?: number;
  readonly coingecko?: Pick<CoinGeckoOptions, 'baseUrl' | 'apiKey'>;
  readonly jupiter?: Pick<JupiterOptions, 'baseUrl' | 'apiKey'>;
}

/**
 * Wires the configured sources into one resolver: each network provider behind its own cache,
 * then the fallback chain with stale-price refusal, then the client-price override.
 */
export function createPriceResolverFromConfig(
  config: PriceConfig,
  { clock, log }: { clock: Clock; log?: PriceLog },
): PriceResolver {
  const build = (name: PriceSourceName): PriceSource => {
    const common = { clock, timeoutMs: config.timeoutMs, log };
    switch (name) {
      case 'coingecko':
        return createCachedPriceSource(createCoinGeckoSource({ ...common, ...config.coingecko }), {
          clock,
          ttlMs: config.cacheTtlMs,
        });
      case 'jupiter':
        return createCachedPriceSource(createJupiterSource({ ...common, ...config.jupiter }), {
          clock,
          ttlMs: config.cacheTtlMs,
        });
      case 'fixed':
        return createFixedPriceSource({ prices: config.fixedPrices, clock });
    }
  };
  const source = createFallbackPriceSource(config.sources.map(build), {
    clock,
    maxAgeMs: config.maxAgeMs,
    log,
  });
  return createPriceResolver({ source, clock });
}
