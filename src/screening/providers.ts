import type { Address } from '@solana/kit';
import type { ScreeningProvider } from '../use-cases/screening.ts';

/** An allow/deny-list provider for local use and tests: an address on the list is flagged. */
export function createListScreening(denied: readonly string[]): ScreeningProvider {
  const flagged = new Set(denied);
  return { screen: async (address) => (flagged.has(address) ? 'flagged' : 'clear') };
}

/**
 * A client of the widely used public sanctions-screening API (decisions, "Screening"):
 * `GET {baseUrl}/api/v1/address/{address}` with `X-API-Key`, answering
 * `{ "identifications": [ { category, name, description, url } ] }`; an empty list is clear, any
 * identification flags the address. Anything else (an HTTP error, a timeout, another body) throws:
 * the route is screened again later, never waved through.
 */
export function createHttpScreening(options: {
  baseUrl: string;
  apiKey?: string | undefined;
  timeoutMs?: number;
}): ScreeningProvider {
  const base = options.baseUrl.replace(/\/+$/, '');
  return {
    async screen(address: Address, call = {}) {
      const signal = AbortSignal.any([
        AbortSignal.timeout(options.timeoutMs ?? 5_000),
        ...(call.signal ? [call.signal] : []),
      ]);
      const response = await fetch(`${base}/api/v1/address/${encodeURIComponent(address)}`, {
        headers: { accept: 'application/json', ...(options.apiKey ? { 'x-api-key': options.apiKey } : {}) },
        signal,
      });
      if (!response.ok) throw new Error(`screening answered HTTP ${response.status}`);
      const body = (await response.json()) as { identifications?: unknown };
      if (!Array.isArray(body.identifications)) throw new Error('screening answered without identifications');
      return body.identifications.length > 0 ? 'flagged' : 'clear';
    },
  };
}

/** A provider for a deployment that screens nothing: never called, since its routes need no verdict. */
export const NO_SCREENING: ScreeningProvider = {
  screen: async () => {
    throw new Error('no screening provider is configured (SCREENING_URL or SCREENING_DENYLIST)');
  },
};
