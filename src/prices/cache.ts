import type { Clock } from '../domain/clock.ts';
import type { PriceQuote, PriceSource } from './types.ts';

/** Default lifetime of a cached price. */
export const DEFAULT_PRICE_CACHE_TTL_MS = 30_000;

/** Settings of a price cache. */
export interface PriceCacheOptions {
  readonly clock: Clock;
  /** How long an answer is reused (default 30 s). */
  readonly ttlMs?: number;
  /** How long "no price" is reused, so a failing provider is not asked on every request (default 5 s, at most ttlMs). */
  readonly missTtlMs?: number;
  /** Bound on remembered mints, since mints come from clients (default 10,000; oldest go first). */
  readonly maxEntries?: number;
}

interface Entry {
  readonly quote: PriceQuote | null;
  readonly expiresAtMs: number;
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * Remembers a source's answers per mint for a short time and shares one upstream request among
 * concurrent callers. The shared request is not tied to any one caller's signal (one caller giving
 * up must not fail the others); a caller's abort only stops its own wait.
 */
export function createCachedPriceSource(inner: PriceSource, options: PriceCacheOptions): PriceSource {
  const ttlMs = options.ttlMs ?? DEFAULT_PRICE_CACHE_TTL_MS;
  const missTtlMs = Math.min(options.missTtlMs ?? 5_000, ttlMs);
  const maxEntries = options.maxEntries ?? 10_000;
  const entries = new Map<string, Entry>();
  const pending = new Map<string, Promise<PriceQuote | null>>();

  function remember(mint: string, quote: PriceQuote | null): void {
    const expiresAtMs = options.clock.now().getTime() + (quote ? ttlMs : missTtlMs);
    entries.delete(mint);
    entries.set(mint, { quote, expiresAtMs });
    for (const oldest of entries.keys()) {
      if (entries.size <= maxEntries) break;
      entries.delete(oldest);
    }
  }

  return {
    name: inner.name,
    getUsdPrice(mint, { signal } = {}) {
      const cached = entries.get(mint);
      if (cached && options.clock.now().getTime() < cached.expiresAtMs)
        return abortable(Promise.resolve(cached.quote), signal);
      let request = pending.get(mint);
      if (!request) {
        request = inner
          .getUsdPrice(mint)
          .catch(() => null)
          .then((quote) => {
            remember(mint, quote);
            return quote;
          })
          .finally(() => pending.delete(mint));
        pending.set(mint, request);
      }
      return abortable(request, signal);
    },
  };
}
