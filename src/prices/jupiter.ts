import type { Clock } from '../domain/clock.ts';
import { createJsonClient, DEFAULT_PRICE_TIMEOUT_MS, isRecord, joinUrl, priceText } from './http.ts';
import type { PriceLog, PriceSource } from './types.ts';
import { silentLog } from './types.ts';

/** Settings of the Jupiter Price API V3 client. */
export interface JupiterOptions {
  /** Default `https://api.jup.ag` with an API key, the keyless `https://lite-api.jup.ag` without. */
  readonly baseUrl?: string;
  /** Sent as `x-api-key`. */
  readonly apiKey?: string;
  readonly timeoutMs?: number;
  readonly clock: Clock;
  readonly log?: PriceLog;
}

/**
 * Any mint's USD price from Jupiter's DEX aggregator, `GET /price/v3?ids=<mint>`, which answers
 * `{ "<mint>": { "usdPrice": 147.48, "blockId": 348004023, "decimals": 9, "priceChange24h": 1.29,
 * ... } }` and omits mints it has no reliable price for. The answer carries a slot (`blockId`) but
 * no time, so the observation time is when the answer arrived.
 */
export function createJupiterSource(options: JupiterOptions): PriceSource {
  const baseUrl = options.baseUrl ?? (options.apiKey ? 'https://api.jup.ag' : 'https://lite-api.jup.ag');
  const headers: Record<string, string> = options.apiKey ? { 'x-api-key': options.apiKey } : {};
  const log = options.log ?? silentLog;
  const getJson = createJsonClient({
    source: 'jupiter',
    timeoutMs: options.timeoutMs ?? DEFAULT_PRICE_TIMEOUT_MS,
    clock: options.clock,
    log,
  });
  return {
    name: 'jupiter',
    async getUsdPrice(mint, { signal } = {}) {
      const query = new URLSearchParams({ ids: mint });
      const body = await getJson(joinUrl(baseUrl, `/price/v3?${query}`), headers, signal);
      if (body === undefined) return null;
      if (!isRecord(body)) {
        log.warn({ source: 'jupiter', mint }, 'price provider answer is malformed');
        return null;
      }
      const entry = Object.hasOwn(body, mint) ? body[mint] : undefined;
      if (entry === undefined || entry === null) return null;
      const priceUsd = isRecord(entry) ? priceText(entry.usdPrice) : null;
      if (priceUsd === null) {
        log.warn({ source: 'jupiter', mint }, 'price provider answer is malformed');
        return null;
      }
      return { mint, priceUsd, source: 'jupiter', observedAt: options.clock.now() };
    },
  };
}
