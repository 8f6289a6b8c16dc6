import { z } from 'zod';
import {
  compareDecimal,
  decimalToNumber,
  type ExactDecimal,
  formatDecimal,
  MAX_TOKEN_DECIMALS,
  parseDecimal,
} from './amounts.ts';

/** One pricing tier: applies from `minUsd` (inclusive) up to the next tier's `minUsd`. */
export interface PricingTier {
  readonly name: string;
  /** Exact decimal string, e.g. "100" or "0". */
  readonly minUsd: string;
  readonly percentFeeBps: number;
}

/** Everything that prices a transfer; deployment defaults merged with an integration's overrides. */
export interface FeeSchedule {
  /** Ascending by `minUsd`; the first starts at "0". */
  readonly tiers: readonly PricingTier[];
  readonly flatFeeLamportsPerHop: bigint;
  /** Integrator's share of both fees, in basis points of each fee. */
  readonly integratorShareBps: number;
  /** Smallest accepted USD equivalent, exact decimal string. */
  readonly minUsd: string;
}

/** The schedule of the product decisions, used when nothing overrides it. */
export const DEFAULT_FEE_SCHEDULE: FeeSchedule = Object.freeze({
  tiers: Object.freeze([
    Object.freeze({ name: 'micro', minUsd: '0', percentFeeBps: 150 }),
    Object.freeze({ name: 'standard', minUsd: '100', percentFeeBps: 100 }),
    Object.freeze({ name: 'pro', minUsd: '10000', percentFeeBps: 60 }),
    Object.freeze({ name: 'institutional', minUsd: '250000', percentFeeBps: 35 }),
  ]),
  flatFeeLamportsPerHop: 10_000n,
  integratorShareBps: 3000,
  minUsd: '1',
});

export const MIN_HOPS = 3;
export const MAX_HOPS = 10;
/** Longest accepted `arrivalSeconds` (7 days). */
export const MAX_ARRIVAL_SECONDS = 7 * 24 * 60 * 60;
/** SPL token amounts are u64 on chain. */
export const U64_MAX = 2n ** 64n - 1n;
const BPS_DENOMINATOR = 10_000n;

/** The error codes the fee rules can produce. */
export type FeeErrorCode = 'MH_010' | 'MH_012' | 'MH_013' | 'MH_014' | 'MH_016';

/** A rule violation: the HTTP layer maps it to its error envelope (400 for all of these). */
export interface DomainIssue {
  readonly code: FeeErrorCode;
  /** The request field at fault. */
  readonly param: string;
  readonly message: string;
}

/** Either a value or the rule violation that prevented it. */
export type Result<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: DomainIssue };

function fail(code: FeeErrorCode, param: string, message: string): { ok: false; error: DomainIssue } {
  return { ok: false, error: { code, param, message } };
}

/** `MH_013` unless hops is an integer from 3 to 10. */
export function checkHops(hops: number): DomainIssue | null {
  if (!Number.isInteger(hops)) return { code: 'MH_016', param: 'hops', message: 'hops must be an integer' };
  if (hops < MIN_HOPS || hops > MAX_HOPS) {
    return { code: 'MH_013', param: 'hops', message: `hops must be from ${MIN_HOPS} to ${MAX_HOPS}` };
  }
  return null;
}

/** The shortest arrival a route of `hops` hops can honour: max(60, 15 × hops) seconds. */
export function minArrivalSeconds(hops: number): number {
  return Math.max(60, 15 * hops);
}

/**
 * The arrival time to use: the requested one if valid, else the integration's default raised to
 * the hop count's minimum. `MH_014` below the minimum, `MH_016` above 7 days or not an integer.
 */
export function resolveArrivalSeconds(
  hops: number,
  requested: number | undefined,
  defaultSeconds: number,
): Result<number> {
  const minimum = minArrivalSeconds(hops);
  if (requested === undefined) return { ok: true, value: Math.max(defaultSeconds, minimum) };
  if (!Number.isInteger(requested))
    return fail('MH_016', 'arrivalSeconds', 'arrivalSeconds must be an integer');
  if (requested < minimum) {
    return fail('MH_014', 'arrivalSeconds', `arrivalSeconds must be at least ${minimum} for ${hops} hops`);
  }
  if (requested > MAX_ARRIVAL_SECONDS) {
    return fail('MH_016', 'arrivalSeconds', `arrivalSeconds must be at most ${MAX_ARRIVAL_SECONDS} (7 days)`);
  }
  return { ok: true, value: requested };
}

/** ceil(amountRaw × bps / 10000): the percentage fee never rounds in the payer's favour. */
export function percentFee(amountRaw: bigint, bps: number): bigint {
  const numerator = amountRaw * BigInt(bps);
  return (numerator + BPS_DENOMINATOR - 1n) / BPS_DENOMINATOR;
}

/** Splits a fee: the integrator gets floor(fee × shareBps / 10000), the platform the rest. */
export function splitFee(fee: bigint, integratorShareBps: number): { integrator: bigint; platform: bigint } {
  const integrator = (fee * BigInt(integratorShareBps)) / BPS_DENOMINATOR;
  return { integrator, platform: fee - integrator };
}

/** Exact USD value of `amountRaw` base units at `priceUsd` per whole token. */
export function usdValueOf(amountRaw: bigint, decimals: number, priceUsd: ExactDecimal): ExactDecimal {
  return { mantissa: amountRaw * priceUsd.mantissa, exponent: priceUsd.exponent - decimals };
}

function decimalOf(text: string): ExactDecimal {
  const parsed = parseDecimal(text);
  if (!parsed) throw new RangeError(`not an exact decimal: ${text}`);
  return parsed;
}

/** The tier whose range holds `usdValue`, compared exactly (no floats at the boundaries). */
export function selectTier(schedule: FeeSchedule, usdValue: ExactDecimal): PricingTier {
  let chosen = schedule.tiers[0];
  if (!chosen) throw new RangeError('a fee schedule needs at least one tier');
  for (const tier of schedule.tiers) {
    if (compareDecimal(usdValue, decimalOf(tier.minUsd)) >= 0) chosen = tier;
  }
  return chosen;
}

/** What the caller knows about the transfer when pricing it. */
export interface FeeQuoteInput {
  readonly amountRaw: bigint;
  readonly decimals: number;
  /** USD per whole token, exact decimal string (a `PriceQuote.priceUsd`). */
  readonly priceUsd: string;
  readonly hops: number;
}

/** The priced transfer; bigint throughout, the HTTP layer renders strings/integers. */
export interface FeeQuote {
  readonly tier: string;
  readonly percentFeeBps: number;
  readonly percentFeeRaw: bigint;
  readonly netDeliveredRaw: bigint;
  readonly integratorPercentShareRaw: bigint;
  readonly platformPercentShareRaw: bigint;
  readonly flatFeeLamportsPerHop: bigint;
  readonly totalFlatFeeLamports: bigint;
  readonly integratorFlatShareLamports: bigint;
  readonly platformFlatShareLamports: bigint;
  /** Exact USD equivalent, plain decimal string. */
  readonly usdValue: string;
  /** Nearest double of `usdValue`, for the display field `usdEquivalent`. */
  readonly usdEquivalent: number;
}

/**
 * Prices a transfer under a schedule: `MH_013` for hops, `MH_016` for an amount outside u64 or
 * bad decimals, `MH_012` below the minimum USD value or when nothing would be delivered.
 */
export function quoteFees(schedule: FeeSchedule, input: FeeQuoteInput): Result<FeeQuote> {
  const { amountRaw, decimals, hops } = input;
  const hopsIssue = checkHops(hops);
  if (hopsIssue) return { ok: false, error: hopsIssue };
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > MAX_TOKEN_DECIMALS) {
    return fail(
      'MH_016',
      'tokenDecimals',
      `tokenDecimals must be an integer from 0 to ${MAX_TOKEN_DECIMALS}`,
    );
  }
  if (amountRaw < 0n || amountRaw > U64_MAX) {
    return fail('MH_016', 'amountRaw', 'amountRaw must be an integer from 0 to 2^64-1');
  }
  const price = parseDecimal(input.priceUsd);
  if (!price) {
    // A provider's price too small or too precise to compute with exactly: treated as no price.
    return fail(
      'MH_010',
      'tokenPriceUsd',
      `no usable USD price for this token (got ${input.priceUsd.slice(0, 40)})`,
    );
  }
  const usdValue = usdValueOf(amountRaw, decimals, price);
  if (compareDecimal(usdValue, decimalOf(schedule.minUsd)) < 0) {
    return fail('MH_012', 'amountRaw', `amount is worth less than the minimum of ${schedule.minUsd} USD`);
  }
  const tier = selectTier(schedule, usdValue);
  const percentFeeRaw = percentFee(amountRaw, tier.percentFeeBps);
  const netDeliveredRaw = amountRaw - percentFeeRaw;
  if (netDeliveredRaw <= 0n) {
    return fail('MH_012', 'amountRaw', 'amount is too small: nothing would be delivered after fees');
  }
  const percentShares = splitFee(percentFeeRaw, schedule.integratorShareBps);
  const totalFlatFeeLamports = schedule.flatFeeLamportsPerHop * BigInt(hops);
  const flatShares = splitFee(totalFlatFeeLamports, schedule.integratorShareBps);
  return {
    ok: true,
    value: {
      tier: tier.name,
      percentFeeBps: tier.percentFeeBps,
      percentFeeRaw,
      netDeliveredRaw,
      integratorPercentShareRaw: percentShares.integrator,
      platformPercentShareRaw: percentShares.platform,
      flatFeeLamportsPerHop: schedule.flatFeeLamportsPerHop,
      totalFlatFeeLamports,
      integratorFlatShareLamports: flatShares.integrator,
      platformFlatShareLamports: flatShares.platform,
      usdValue: formatDecimal(usdValue),
      usdEquivalent: decimalToNumber(usdValue),
    },
  };
}

// JSON settings hold USD figures as numbers or strings; both become canonical exact strings.
const usdSchema = z.union([z.number().nonnegative(), z.string()]).transform((value, ctx) => {
  const parsed = typeof value === 'number' ? parseDecimal(String(value)) : parseDecimal(value);
  if (!parsed) {
    ctx.addIssue({ code: 'custom', message: 'must be a non-negative decimal number' });
    return z.NEVER;
  }
  return formatDecimal(parsed);
});

const bpsSchema = z.int().min(0).max(10_000);

// Output stays a decimal string so validated overrides can be stored as JSON unchanged.
/** Largest flat fee per hop an override may set (1,000 SOL): totals stay exact JSON integers. */
const MAX_FLAT_FEE_LAMPORTS_PER_HOP = 1_000_000_000_000n;

const lamportsSchema = z
  .union([z.int().nonnegative(), z.string().regex(/^\d{1,20}$/)])
  .transform((value, ctx) => {
    const lamports = BigInt(value);
    if (lamports > MAX_FLAT_FEE_LAMPORTS_PER_HOP) {
      ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_FLAT_FEE_LAMPORTS_PER_HOP} lamports` });
      return z.NEVER;
    }
    return lamports.toString();
  });

const tierSchema = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9_]{0,31}$/),
  minUsd: usdSchema,
  percentFeeBps: bpsSchema,
});

/**
 * Validates an integration's (or a deployment's) fee overrides as stored in JSON settings; every
 * field optional, `tiers` replaces the whole table. The admin API reuses it for its request body.
 */
export const feeScheduleOverridesSchema = z.strictObject({
  tiers: z
    .array(tierSchema)
    .min(1)
    .max(16)
    .superRefine((tiers, ctx) => {
      if (tiers.length > 0 && tiers[0]?.minUsd !== '0') {
        ctx.addIssue({ code: 'custom', path: [0, 'minUsd'], message: 'the first tier must start at 0' });
      }
      const names = new Set<string>();
      tiers.forEach((tier, index) => {
        if (names.has(tier.name)) {
          ctx.addIssue({ code: 'custom', path: [index, 'name'], message: 'tier names must be unique' });
        }
        names.add(tier.name);
        const previous = tiers[index - 1];
        if (previous && compareDecimal(decimalOf(tier.minUsd), decimalOf(previous.minUsd)) <= 0) {
          ctx.addIssue({
            code: 'custom',
            path: [index, 'minUsd'],
            message: 'minUsd must increase tier by tier',
          });
        }
      });
    })
    .optional(),
  flatFeeLamportsPerHop: lamportsSchema.optional(),
  integratorShareBps: bpsSchema.optional(),
  minUsd: usdSchema.optional(),
});

/** Fee overrides after validation by `feeScheduleOverridesSchema`: canonical and JSON-safe. */
export type FeeScheduleOverrides = z.output<typeof feeScheduleOverridesSchema>;

/** The schedule with each overridden field replaced; fields absent from `overrides` keep `base`. */
export function mergeFeeSchedule(base: FeeSchedule, overrides: FeeScheduleOverrides): FeeSchedule {
  return {
    tiers: overrides.tiers ?? base.tiers,
    flatFeeLamportsPerHop:
      overrides.flatFeeLamportsPerHop === undefined
        ? base.flatFeeLamportsPerHop
        : BigInt(overrides.flatFeeLamportsPerHop),
    integratorShareBps: overrides.integratorShareBps ?? base.integratorShareBps,
    minUsd: overrides.minUsd ?? base.minUsd,
  };
}
