import { z } from 'zod';
import { formatDecimal, parseDecimal } from '../domain/amounts.ts';
import type { Clock } from '../domain/clock.ts';
import { NATIVE_SOL_MINT, type PriceSource } from './types.ts';

/** The SOL price the fixed table knows when nothing overrides it, so local SOL estimates just work. */
export const DEFAULT_SOL_PRICE_USD = '150';

const mintSchema = z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'must be a base58 mint address');
const positivePriceSchema = z.union([z.number(), z.string()]).transform((value, ctx) => {
  const decimal = parseDecimal(String(value));
  if (!decimal || decimal.mantissa === 0n) {
    ctx.addIssue({ code: 'custom', message: 'must be a positive decimal number of USD' });
    return z.NEVER;
  }
  return formatDecimal(decimal);
});

/**
 * Validates the `PRICES` setting, a JSON map of mint to USD price (number or decimal string), into
 * canonical exact decimal strings.
 */
export const fixedPricesSchema = z.record(mintSchema, positivePriceSchema);

/**
 * Prices from a fixed table, for local use and tests: `prices` on top of the default SOL price.
 * Its quotes are observed "now", so they are never stale.
 */
export function createFixedPriceSource(options: {
  prices?: Readonly<Record<string, string>>;
  clock: Clock;
}): PriceSource {
  const table = new Map(Object.entries({ [NATIVE_SOL_MINT]: DEFAULT_SOL_PRICE_USD, ...options.prices }));
  return {
    name: 'fixed',
    async getUsdPrice(mint) {
      const priceUsd = table.get(mint);
      return priceUsd === undefined
        ? null
        : { mint, priceUsd, source: 'fixed', observedAt: options.clock.now() };
    },
  };
}
