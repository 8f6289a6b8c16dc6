/** The native SOL mint (wrapped SOL); the service prices SOL transfers under this address. */
export const NATIVE_SOL_MINT = 'So11111111111111111111111111111111111111112';

/** One USD price observation for one mint. */
export interface PriceQuote {
  readonly mint: string;
  /** USD per whole token as an exact, canonical decimal string (e.g. "147.48"). */
  readonly priceUsd: string;
  /** Who answered: `coingecko`, `jupiter`, `fixed` or `client`. */
  readonly source: string;
  /** When the provider observed the price (its own timestamp when it gives one). */
  readonly observedAt: Date;
}

/** Options every price lookup takes; aborting `signal` rejects the lookup with its reason. */
export interface PriceLookupOptions {
  readonly signal?: AbortSignal;
}

/** Anything that can price a mint in USD; resolves null when it has no usable price. */
export interface PriceSource {
  readonly name: string;
  getUsdPrice(mint: string, options?: PriceLookupOptions): Promise<PriceQuote | null>;
}

/** The slice of a pino logger the price sources use to report failed or refused answers. */
export interface PriceLog {
  warn(details: Record<string, unknown>, message: string): void;
}

/** A log that drops everything, for callers that pass none. */
export const silentLog: PriceLog = { warn: () => {} };
