import type { Clock } from '../domain/clock.ts';
import { type PriceLog, type PriceQuote, type PriceSource, silentLog } from './types.ts';

/** Default oldest acceptable price observation. */
export const DEFAULT_PRICE_MAX_AGE_MS = 300_000;

/** Settings of the fallback chain. */
export interface FallbackOptions {
  readonly clock: Clock;
  /** Quotes observed longer ago than this are refused (default 5 minutes). */
  readonly maxAgeMs?: number;
  readonly log?: PriceLog;
}

/**
 * Asks `sources` in order and returns the first fresh quote. A source that has no price, fails,
 * or answers with a quote older than `maxAgeMs` is passed over for the next one.
 */
export function createFallbackPriceSource(
  sources: readonly PriceSource[],
  options: FallbackOptions,
): PriceSource {
  const maxAgeMs = options.maxAgeMs ?? DEFAULT_PRICE_MAX_AGE_MS;
  const log = options.log ?? silentLog;
  return {
    name: sources.map((source) => source.name).join('>'),
    async getUsdPrice(mint, { signal } = {}) {
      for (const source of sources) {
        let quote: PriceQuote | null;
        try {
          quote = await source.getUsdPrice(mint, { signal });
        } catch (error) {
          if (signal?.aborted) throw signal.reason;
          log.warn({ source: source.name, mint, reason: String(error) }, 'price source failed');
          continue;
        }
        if (!quote) continue;
        const ageMs = options.clock.now().getTime() - quote.observedAt.getTime();
        if (ageMs > maxAgeMs) {
          log.warn({ source: source.name, mint, ageMs }, 'price refused as stale');
          continue;
        }
        return quote;
      }
      return null;
    },
  };
}
