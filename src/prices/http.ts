import { decimalFromNumber, formatDecimal } from '../domain/amounts.ts';
import type { Clock } from '../domain/clock.ts';
import type { PriceLog } from './types.ts';

/** Default per-request timeout of the provider clients. */
export const DEFAULT_PRICE_TIMEOUT_MS = 2_000;

// Without a Retry-After header a 429 pauses the provider this long; a header is honoured up to
// the cap so a broken header cannot switch a provider off for hours.
const DEFAULT_COOL_DOWN_MS = 30_000;
const MAX_COOL_DOWN_MS = 300_000;

/** Dependencies of a provider's JSON client. */
export interface JsonClientOptions {
  readonly source: string;
  readonly timeoutMs: number;
  readonly clock: Clock;
  readonly log: PriceLog;
}

/** GETs a URL and parses JSON; undefined for any failure (already logged), never throws unless `signal` aborted. */
export type GetJson = (
  url: string,
  headers: Record<string, string>,
  signal?: AbortSignal,
) => Promise<unknown>;

function coolDownMs(retryAfter: string | null, nowMs: number): number {
  if (retryAfter === null) return DEFAULT_COOL_DOWN_MS;
  const seconds = Number(retryAfter);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(retryAfter) - nowMs;
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_COOL_DOWN_MS) : DEFAULT_COOL_DOWN_MS;
}

/**
 * A JSON GET client for one provider: a timeout per request, and after a 429 no requests until
 * the provider's Retry-After has passed, so a rate-limited provider is not hammered further.
 */
export function createJsonClient({ source, timeoutMs, clock, log }: JsonClientOptions): GetJson {
  let pausedUntilMs = 0;
  return async (url, headers, signal) => {
    const startMs = clock.now().getTime();
    if (startMs < pausedUntilMs) return undefined;
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      const response = await fetch(url, {
        headers: { accept: 'application/json', ...headers },
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      if (!response.ok) {
        await response.body?.cancel();
        if (response.status === 429) {
          pausedUntilMs = startMs + coolDownMs(response.headers.get('retry-after'), startMs);
        }
        log.warn({ source, status: response.status }, 'price provider answered with an error status');
        return undefined;
      }
      return JSON.parse(await response.text());
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const reason = timeout.aborted ? 'timeout' : error instanceof Error ? error.message : String(error);
      log.warn({ source, reason }, 'price provider request failed');
      return undefined;
    }
  };
}

/** Joins a configured base URL (which may carry a path prefix) and an absolute path. */
export function joinUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

/** Narrowing helper for parsed JSON. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A provider's JSON price as a canonical exact decimal string; null unless a positive finite number. */
export function priceText(value: unknown): string | null {
  if (typeof value !== 'number' || !(value > 0)) return null;
  const decimal = decimalFromNumber(value);
  return decimal ? formatDecimal(decimal) : null;
}
