import type { Clock } from '../domain/clock.ts';
import { createJsonClient, DEFAULT_PRICE_TIMEOUT_MS, isRecord, joinUrl, priceText } from './http.ts';
import { NATIVE_SOL_MINT, type PriceLog, type PriceSource, silentLog } from './types.ts';

/** Settings of the CoinGecko spot price client. */
export interface CoinGeckoOptions {
  /** Default `https://api.coingecko.com` (Demo/public); `https://pro-api.coingecko.com` for Pro keys. */
  readonly baseUrl?: string;
  /** Sent as `x-cg-pro-api-key` to the Pro host, `x-cg-demo-api-key` elsewhere. */
  readonly apiKey?: string;
  /** Which CoinGecko coin id prices which mint; default only SOL (`solana`). */
  readonly coinIds?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
  readonly clock: Clock;
  readonly log?: PriceLog;
}

/** Default CoinGecko host (Demo and keyless public API). */
export const COINGECKO_DEFAULT_BASE_URL = 'https://api.coingecko.com';

/**
 * SOL/USD (and any mint mapped to a coin id) from CoinGecko's
 * `GET /api/v3/simple/price?ids=<id>&vs_currencies=usd&include_last_updated_at=true`, which answers
 * `{ "solana": { "usd": 147.48, "last_updated_at": 1717577725 } }`. The observation time is
 * CoinGecko's `last_updated_at`; an answer without it is unusable because its age is unknown.
 */
export function createCoinGeckoSource(options: CoinGeckoOptions): PriceSource {
  const baseUrl = options.baseUrl ?? COINGECKO_DEFAULT_BASE_URL;
  const coinIds = options.coinIds ?? { [NATIVE_SOL_MINT]: 'solana' };
  const headers: Record<string, string> = {};
  if (options.apiKey) {
    const isPro = new URL(baseUrl).hostname === 'pro-api.coingecko.com';
    headers[isPro ? 'x-cg-pro-api-key' : 'x-cg-demo-api-key'] = options.apiKey;
  }
  const getJson = createJsonClient({
    source: 'coingecko',
    timeoutMs: options.timeoutMs ?? DEFAULT_PRICE_TIMEOUT_MS,
    clock: options.clock,
    log: options.log ?? silentLog,
  });
  return {
    name: 'coingecko',
    async getUsdPrice(mint, { signal } = {}) {
      const coinId = Object.hasOwn(coinIds, mint) ? coinIds[mint] : undefined;
      if (!coinId) return null;
      const query = new URLSearchParams({
        ids: coinId,
        vs_currencies: 'usd',
        include_last_updated_at: 'true',
      });
      const body = await getJson(joinUrl(baseUrl, `/api/v3/simple/price?${query}`), headers, signal);
      const entry = isRecord(body) ? body[coinId] : undefined;
      if (!isRecord(entry)) return null;
      const priceUsd = priceText(entry.usd);
      const updatedAt = entry.last_updated_at;
      if (
        priceUsd === null ||
        typeof updatedAt !== 'number' ||
        !Number.isSafeInteger(updatedAt) ||
        updatedAt <= 0
      ) {
        (options.log ?? silentLog).warn(
          { source: 'coingecko', coinId },
          'price provider answer is malformed',
        );
        return null;
      }
      return { mint, priceUsd, source: 'coingecko', observedAt: new Date(updatedAt * 1000) };
    },
  };
}
