// Exact decimal arithmetic on bigint. Hand-written rather than decimal.js/big.js because every
// caller holds bigint base units and needs only parse, compare, scale and format; a float-based or
// string-based library would add conversions at each boundary for no gain.

/** An exact non-negative decimal number: value = mantissa × 10^exponent. */
export interface ExactDecimal {
  readonly mantissa: bigint;
  readonly exponent: number;
}

/** Largest decimals value a mint may have (spec: 0 to 18). */
export const MAX_TOKEN_DECIMALS = 18;

// Bounds keep 10n ** exponent cheap whatever text a provider or client sends.
const MAX_DECIMAL_TEXT_LENGTH = 200;
const MAX_ABS_EXPONENT = 400;

const DECIMAL_WITH_EXPONENT = /^(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d{1,4}))?$/;
const PLAIN_DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/**
 * Parses a non-negative decimal such as "147.48", "0.000012" or "1.2e-7" exactly; null when the
 * text is not one.
 */
export function parseDecimal(text: string): ExactDecimal | null {
  if (text.length > MAX_DECIMAL_TEXT_LENGTH) return null;
  const match = DECIMAL_WITH_EXPONENT.exec(text);
  if (!match) return null;
  const whole = match[1] ?? '';
  const fraction = match[2] ?? '';
  const exponent = Number(match[3] ?? '0') - fraction.length;
  if (Math.abs(exponent) > MAX_ABS_EXPONENT) return null;
  return { mantissa: BigInt(whole + fraction), exponent };
}

/**
 * The exact decimal of a JSON number as written in its shortest round-trip form (so 0.1 is 1/10,
 * not the binary double); null for negative or non-finite numbers.
 */
export function decimalFromNumber(value: number): ExactDecimal | null {
  if (!Number.isFinite(value) || value < 0) return null;
  return parseDecimal(String(value));
}

/** Canonical plain notation: no exponent, no trailing fractional zeros, "0" for zero. */
export function formatDecimal(value: ExactDecimal): string {
  let { mantissa, exponent } = value;
  if (mantissa === 0n) return '0';
  while (exponent < 0 && mantissa % 10n === 0n) {
    mantissa /= 10n;
    exponent += 1;
  }
  if (exponent >= 0) return (mantissa * 10n ** BigInt(exponent)).toString();
  const digits = mantissa.toString().padStart(-exponent + 1, '0');
  const point = digits.length + exponent;
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** Compares two exact decimals: -1, 0 or 1. */
export function compareDecimal(a: ExactDecimal, b: ExactDecimal): -1 | 0 | 1 {
  const common = Math.min(a.exponent, b.exponent);
  const left = a.mantissa * 10n ** BigInt(a.exponent - common);
  const right = b.mantissa * 10n ** BigInt(b.exponent - common);
  return left < right ? -1 : left > right ? 1 : 0;
}

/** The nearest double to an exact decimal; for display fields only, never for money. */
export function decimalToNumber(value: ExactDecimal): number {
  return Number(formatDecimal(value));
}

function assertDecimals(decimals: number): void {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > MAX_TOKEN_DECIMALS) {
    throw new RangeError(`decimals must be an integer from 0 to ${MAX_TOKEN_DECIMALS}, got ${decimals}`);
  }
}

/** Human token amount of a base-unit amount, e.g. (1500000n, 6) -> "1.5". */
export function rawToTokens(amountRaw: bigint, decimals: number): string {
  assertDecimals(decimals);
  if (amountRaw < 0n) throw new RangeError('amountRaw must not be negative');
  return formatDecimal({ mantissa: amountRaw, exponent: -decimals });
}

/**
 * Base units of a human token amount such as "1.5" or "1.50" (plain notation only); null when the
 * text is malformed or has non-zero digits below the mint's smallest unit.
 */
export function tokensToRaw(amountTokens: string, decimals: number): bigint | null {
  assertDecimals(decimals);
  if (amountTokens.length > MAX_DECIMAL_TEXT_LENGTH) return null;
  const match = PLAIN_DECIMAL.exec(amountTokens);
  if (!match) return null;
  const whole = match[1] ?? '';
  const fraction = match[2] ?? '';
  const kept = fraction.slice(0, decimals);
  if (/[^0]/.test(fraction.slice(decimals))) return null;
  return BigInt(whole + kept.padEnd(decimals, '0'));
}

/** Whether a client's `amountTokens` denotes exactly `amountRaw` base units at `decimals`. */
export function tokensMatchRaw(amountTokens: string, amountRaw: bigint, decimals: number): boolean {
  return tokensToRaw(amountTokens, decimals) === amountRaw;
}
