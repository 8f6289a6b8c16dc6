import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  compareDecimal,
  decimalFromNumber,
  decimalToNumber,
  formatDecimal,
  parseDecimal,
  rawToTokens,
  tokensMatchRaw,
  tokensToRaw,
} from './amounts.ts';

const U64_MAX = 2n ** 64n - 1n;

describe('parseDecimal and formatDecimal', () => {
  test('parses plain and exponent notation exactly', () => {
    assert.deepEqual(parseDecimal('147.48'), { mantissa: 14748n, exponent: -2 });
    assert.deepEqual(parseDecimal('100'), { mantissa: 100n, exponent: 0 });
    assert.deepEqual(parseDecimal('1.50'), { mantissa: 150n, exponent: -2 });
    assert.deepEqual(parseDecimal('1.2e-7'), { mantissa: 12n, exponent: -8 });
    assert.deepEqual(parseDecimal('5E+3'), { mantissa: 5n, exponent: 3 });
  });

  test('rejects what is not a non-negative decimal', () => {
    for (const text of [
      '',
      '-1',
      '1.',
      '.5',
      '1,5',
      'NaN',
      'Infinity',
      '0x10',
      ' 1',
      '1e',
      '1e99999',
      '1'.repeat(201),
    ]) {
      assert.equal(parseDecimal(text), null, text);
    }
  });

  test('formats canonically', () => {
    assert.equal(formatDecimal({ mantissa: 150n, exponent: -2 }), '1.5');
    assert.equal(formatDecimal({ mantissa: 12n, exponent: -8 }), '0.00000012');
    assert.equal(formatDecimal({ mantissa: 5n, exponent: 3 }), '5000');
    assert.equal(formatDecimal({ mantissa: 0n, exponent: -9 }), '0');
    assert.equal(formatDecimal({ mantissa: 1000n, exponent: -3 }), '1');
  });

  test('numbers convert through their shortest round-trip text', () => {
    assert.equal(formatDecimal(decimalFromNumber(0.1)!), '0.1');
    assert.equal(formatDecimal(decimalFromNumber(147.48)!), '147.48');
    assert.equal(formatDecimal(decimalFromNumber(1.2e-7)!), '0.00000012');
    assert.equal(formatDecimal(decimalFromNumber(1e21)!), '1000000000000000000000');
    assert.equal(decimalFromNumber(-1), null);
    assert.equal(decimalFromNumber(Number.NaN), null);
    assert.equal(decimalFromNumber(Number.POSITIVE_INFINITY), null);
  });

  test('compares by value, not by representation', () => {
    assert.equal(compareDecimal(parseDecimal('1.50')!, parseDecimal('1.5')!), 0);
    assert.equal(compareDecimal(parseDecimal('99.999999')!, parseDecimal('100')!), -1);
    assert.equal(compareDecimal(parseDecimal('1e2')!, parseDecimal('99.9')!), 1);
  });

  test('format then parse is the identity on values, and double conversion is the nearest double', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: U64_MAX * 10n ** 9n }),
        fc.integer({ min: -30, max: 30 }),
        (m, e) => {
          const value = { mantissa: m, exponent: e };
          const text = formatDecimal(value);
          assert.equal(compareDecimal(parseDecimal(text)!, value), 0);
          assert.equal(decimalToNumber(value), Number(text));
        },
      ),
    );
  });

  test('any finite non-negative double converts to a decimal that reads back as the same double', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }), (n) => {
        const value = decimalFromNumber(n);
        assert.ok(value);
        assert.equal(decimalToNumber(value), n === 0 ? 0 : n);
      }),
    );
  });
});

describe('token amounts', () => {
  test('raw to tokens', () => {
    assert.equal(rawToTokens(1_500_000n, 6), '1.5');
    assert.equal(rawToTokens(1n, 9), '0.000000001');
    assert.equal(rawToTokens(0n, 6), '0');
    assert.equal(rawToTokens(42n, 0), '42');
    assert.equal(rawToTokens(U64_MAX, 18), '18.446744073709551615');
    assert.throws(() => rawToTokens(-1n, 6), RangeError);
    assert.throws(() => rawToTokens(1n, 19), RangeError);
    assert.throws(() => rawToTokens(1n, 1.5), RangeError);
  });

  test('tokens to raw', () => {
    assert.equal(tokensToRaw('1.5', 6), 1_500_000n);
    assert.equal(tokensToRaw('1.50', 6), 1_500_000n);
    assert.equal(tokensToRaw('1.500000000', 6), 1_500_000n);
    assert.equal(tokensToRaw('0.000001', 6), 1n);
    assert.equal(tokensToRaw('42', 0), 42n);
    assert.equal(tokensToRaw('42.0', 0), 42n);
    assert.equal(tokensToRaw('0.0000001', 6), null);
    assert.equal(tokensToRaw('1e6', 6), null);
    assert.equal(tokensToRaw('-1', 6), null);
    assert.equal(tokensToRaw('1.', 6), null);
    assert.equal(tokensToRaw('', 6), null);
  });

  test('amountTokens consistency', () => {
    assert.equal(tokensMatchRaw('1.50', 1_500_000n, 6), true);
    assert.equal(tokensMatchRaw('1.5', 1_500_000n, 6), true);
    assert.equal(tokensMatchRaw('1.5', 1_500_000n, 9), false);
    assert.equal(tokensMatchRaw('1.500001', 1_500_000n, 6), false);
    assert.equal(tokensMatchRaw('1.5000001', 1_500_000n, 6), false);
  });

  test('raw -> tokens -> raw round-trips for every u64 amount and every decimals', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: U64_MAX }), fc.integer({ min: 0, max: 18 }), (raw, decimals) => {
        const tokens = rawToTokens(raw, decimals);
        assert.equal(tokensToRaw(tokens, decimals), raw);
        assert.equal(tokensMatchRaw(`${tokens}${tokens.includes('.') ? '' : '.'}000`, raw, decimals), true);
        assert.equal(tokensMatchRaw(tokens, raw + 1n, decimals), false);
      }),
    );
  });
});
