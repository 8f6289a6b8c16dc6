import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  checkHops,
  DEFAULT_FEE_SCHEDULE,
  type FeeQuote,
  type FeeQuoteInput,
  type FeeSchedule,
  feeScheduleOverridesSchema,
  MAX_ARRIVAL_SECONDS,
  mergeFeeSchedule,
  minArrivalSeconds,
  percentFee,
  quoteFees,
  resolveArrivalSeconds,
  splitFee,
  U64_MAX,
} from './fees.ts';

function quote(input: FeeQuoteInput, schedule: FeeSchedule = DEFAULT_FEE_SCHEDULE): FeeQuote {
  const result = quoteFees(schedule, input);
  if (!result.ok) throw new Error(`expected a quote, got ${JSON.stringify(result.error)}`);
  return result.value;
}

describe('quoteFees: concrete figures', () => {
  test('1,000 USDC (6 decimals) at 1 USD, 7 hops: standard tier', () => {
    assert.deepEqual(quote({ amountRaw: 1_000_000_000n, decimals: 6, priceUsd: '1', hops: 7 }), {
      tier: 'standard',
      percentFeeBps: 100,
      percentFeeRaw: 10_000_000n,
      netDeliveredRaw: 990_000_000n,
      integratorPercentShareRaw: 3_000_000n,
      platformPercentShareRaw: 7_000_000n,
      flatFeeLamportsPerHop: 10_000n,
      totalFlatFeeLamports: 70_000n,
      integratorFlatShareLamports: 21_000n,
      platformFlatShareLamports: 49_000n,
      usdValue: '1000',
      usdEquivalent: 1000,
    });
  });

  test('0.5 SOL at 147.48 USD, 3 hops: micro tier, fee rounded up, share rounded down', () => {
    assert.deepEqual(quote({ amountRaw: 500_000_001n, decimals: 9, priceUsd: '147.48', hops: 3 }), {
      tier: 'micro',
      percentFeeBps: 150,
      // 500000001 * 150 / 10000 = 7500000.015 -> 7500001
      percentFeeRaw: 7_500_001n,
      netDeliveredRaw: 492_500_000n,
      // 7500001 * 0.3 = 2250000.3 -> 2250000
      integratorPercentShareRaw: 2_250_000n,
      platformPercentShareRaw: 5_250_001n,
      flatFeeLamportsPerHop: 10_000n,
      totalFlatFeeLamports: 30_000n,
      integratorFlatShareLamports: 9_000n,
      platformFlatShareLamports: 21_000n,
      usdValue: '73.74000014748',
      usdEquivalent: 73.74000014748,
    });
  });

  test('pro and institutional tiers', () => {
    const pro = quote({ amountRaw: 10_000_000_000n, decimals: 6, priceUsd: '1', hops: 10 });
    assert.equal(pro.tier, 'pro');
    assert.equal(pro.percentFeeRaw, 60_000_000n);
    assert.equal(pro.totalFlatFeeLamports, 100_000n);
    const inst = quote({ amountRaw: 250_000_000_000n, decimals: 6, priceUsd: '1', hops: 10 });
    assert.equal(inst.tier, 'institutional');
    assert.equal(inst.percentFeeBps, 35);
    assert.equal(inst.percentFeeRaw, 875_000_000n);
    assert.equal(inst.netDeliveredRaw, 249_125_000_000n);
  });

  test('u64 max at 18 decimals and a large price stays exact', () => {
    const q = quote({ amountRaw: U64_MAX, decimals: 0, priceUsd: '1000000', hops: 3 });
    assert.equal(q.tier, 'institutional');
    // 18446744073709551615 * 35 = 645636042579834306525; / 10000 -> ceil = 64563604257983430.6525 -> ...431
    assert.equal(q.percentFeeRaw, 64_563_604_257_983_431n);
    assert.equal(q.netDeliveredRaw, 18_382_180_469_451_568_184n);
    assert.equal(q.usdValue, '18446744073709551615000000');
  });

  test('minimums: MH_012 below 1.00 USD and when nothing would be delivered', () => {
    assert.deepEqual(
      quoteFees(DEFAULT_FEE_SCHEDULE, { amountRaw: 999_999n, decimals: 6, priceUsd: '1', hops: 7 }),
      {
        ok: false,
        error: {
          code: 'MH_012',
          param: 'amountRaw',
          message: 'amount is worth less than the minimum of 1 USD',
        },
      },
    );
    assert.equal(
      quote({ amountRaw: 1_000_000n, decimals: 6, priceUsd: '1', hops: 7 }).percentFeeRaw,
      15_000n,
    );
    // One base unit worth 5 USD: fee ceil(0.015) = 1 leaves nothing.
    assert.deepEqual(
      quoteFees(DEFAULT_FEE_SCHEDULE, { amountRaw: 1n, decimals: 0, priceUsd: '5', hops: 7 }),
      {
        ok: false,
        error: {
          code: 'MH_012',
          param: 'amountRaw',
          message: 'amount is too small: nothing would be delivered after fees',
        },
      },
    );
    assert.equal(quote({ amountRaw: 2n, decimals: 0, priceUsd: '5', hops: 7 }).netDeliveredRaw, 1n);
    const zero = quoteFees(DEFAULT_FEE_SCHEDULE, { amountRaw: 0n, decimals: 6, priceUsd: '0', hops: 7 });
    assert.equal(zero.ok || zero.error.code, 'MH_012');
  });

  test('invalid inputs', () => {
    const base = { amountRaw: 1_000_000_000n, decimals: 6, priceUsd: '1', hops: 7 };
    const issue = (input: FeeQuoteInput) => {
      const result = quoteFees(DEFAULT_FEE_SCHEDULE, input);
      return result.ok ? null : [result.error.code, result.error.param];
    };
    assert.deepEqual(issue({ ...base, hops: 2 }), ['MH_013', 'hops']);
    assert.deepEqual(issue({ ...base, hops: 11 }), ['MH_013', 'hops']);
    assert.deepEqual(issue({ ...base, hops: 7.5 }), ['MH_016', 'hops']);
    assert.deepEqual(issue({ ...base, decimals: 19 }), ['MH_016', 'tokenDecimals']);
    assert.deepEqual(issue({ ...base, amountRaw: -1n }), ['MH_016', 'amountRaw']);
    assert.deepEqual(issue({ ...base, amountRaw: U64_MAX + 1n }), ['MH_016', 'amountRaw']);
    // A price that is not an exact decimal the service can compute with is no price at all.
    assert.deepEqual(issue({ ...base, priceUsd: '-1' }), ['MH_010', 'tokenPriceUsd']);
    assert.deepEqual(issue({ ...base, priceUsd: `0.${'0'.repeat(250)}1` }), ['MH_010', 'tokenPriceUsd']);
  });
});

describe('hops and arrival', () => {
  test('hops 3..10', () => {
    assert.equal(checkHops(3), null);
    assert.equal(checkHops(10), null);
    assert.deepEqual(checkHops(2), { code: 'MH_013', param: 'hops', message: 'hops must be from 3 to 10' });
  });

  test('arrival minimum is max(60, 15 * hops)', () => {
    assert.deepEqual(
      [3, 4, 5, 7, 10].map((hops) => minArrivalSeconds(hops)),
      [60, 60, 75, 105, 150],
    );
  });

  test('arrival: requested, default raised to the minimum, MH_014, MH_016 above 7 days', () => {
    assert.deepEqual(resolveArrivalSeconds(10, undefined, 600), { ok: true, value: 600 });
    assert.deepEqual(resolveArrivalSeconds(10, undefined, 60), { ok: true, value: 150 });
    assert.deepEqual(resolveArrivalSeconds(10, 150, 600), { ok: true, value: 150 });
    assert.deepEqual(resolveArrivalSeconds(10, 149, 600), {
      ok: false,
      error: {
        code: 'MH_014',
        param: 'arrivalSeconds',
        message: 'arrivalSeconds must be at least 150 for 10 hops',
      },
    });
    assert.deepEqual(resolveArrivalSeconds(3, MAX_ARRIVAL_SECONDS, 600), { ok: true, value: 604_800 });
    const tooLong = resolveArrivalSeconds(3, MAX_ARRIVAL_SECONDS + 1, 600);
    assert.deepEqual(tooLong.ok ? null : [tooLong.error.code, tooLong.error.param], [
      'MH_016',
      'arrivalSeconds',
    ]);
    const fractional = resolveArrivalSeconds(3, 90.5, 600);
    assert.deepEqual(fractional.ok ? null : fractional.error.code, 'MH_016');
  });
});

describe('overrides', () => {
  test('an integration overrides some fields; the rest keep the defaults', () => {
    const overrides = feeScheduleOverridesSchema.parse({
      flatFeeLamportsPerHop: '5000',
      integratorShareBps: 5000,
      minUsd: 0.5,
    });
    assert.deepEqual(overrides, { flatFeeLamportsPerHop: '5000', integratorShareBps: 5000, minUsd: '0.5' });
    assert.deepEqual(JSON.parse(JSON.stringify(overrides)), overrides);
    const schedule = mergeFeeSchedule(DEFAULT_FEE_SCHEDULE, overrides);
    assert.deepEqual(schedule, {
      tiers: DEFAULT_FEE_SCHEDULE.tiers,
      flatFeeLamportsPerHop: 5000n,
      integratorShareBps: 5000,
      minUsd: '0.5',
    });
    const q = quote({ amountRaw: 600_000n, decimals: 6, priceUsd: '1', hops: 4 }, schedule);
    assert.equal(q.percentFeeRaw, 9000n);
    assert.equal(q.integratorPercentShareRaw, 4500n);
    assert.equal(q.totalFlatFeeLamports, 20_000n);
    assert.equal(q.integratorFlatShareLamports, 10_000n);
  });

  test('a replaced tier table is used exactly', () => {
    const overrides = feeScheduleOverridesSchema.parse({
      tiers: [
        { name: 'small', minUsd: 0, percentFeeBps: 200 },
        { name: 'large', minUsd: '500.25', percentFeeBps: 10 },
      ],
    });
    const schedule = mergeFeeSchedule(DEFAULT_FEE_SCHEDULE, overrides);
    assert.equal(
      quote({ amountRaw: 500_249_999n, decimals: 6, priceUsd: '1', hops: 3 }, schedule).tier,
      'small',
    );
    assert.equal(
      quote({ amountRaw: 500_250_000n, decimals: 6, priceUsd: '1', hops: 3 }, schedule).tier,
      'large',
    );
  });

  test('invalid overrides are refused with the offending path', () => {
    const paths = (input: unknown) => {
      const result = feeScheduleOverridesSchema.safeParse(input);
      return result.success ? [] : result.error.issues.map((issue) => issue.path.join('.'));
    };
    assert.deepEqual(paths({}), []);
    assert.deepEqual(paths({ integratorShareBps: 10_001 }), ['integratorShareBps']);
    assert.deepEqual(paths({ integratorShareBps: 1.5 }), ['integratorShareBps']);
    assert.deepEqual(paths({ flatFeeLamportsPerHop: -1 }), ['flatFeeLamportsPerHop']);
    assert.deepEqual(paths({ flatFeeLamportsPerHop: '18446744073709551616' }), ['flatFeeLamportsPerHop']);
    assert.deepEqual(paths({ minUsd: '-1' }), ['minUsd']);
    assert.deepEqual(paths({ surprise: 1 }), ['']);
    assert.deepEqual(paths({ tiers: [] }), ['tiers']);
    assert.deepEqual(paths({ tiers: [{ name: 'a', minUsd: 1, percentFeeBps: 1 }] }), ['tiers.0.minUsd']);
    assert.deepEqual(
      paths({
        tiers: [
          { name: 'a', minUsd: 0, percentFeeBps: 1 },
          { name: 'a', minUsd: 0, percentFeeBps: 1 },
        ],
      }),
      ['tiers.1.name', 'tiers.1.minUsd'],
    );
    assert.deepEqual(paths({ tiers: [{ name: 'A', minUsd: 0, percentFeeBps: 1 }] }), ['tiers.0.name']);
  });
});

// Properties. Prices are exact decimals with up to 12 fractional digits.
const amountArb = fc.bigInt({ min: 0n, max: U64_MAX });
const bpsArb = fc.integer({ min: 0, max: 10_000 });
function decimalText(units: bigint, scale: number): string {
  const digits = units.toString().padStart(scale + 1, '0');
  return scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}
const priceArb = fc
  .tuple(fc.bigInt({ min: 1n, max: 10n ** 15n }), fc.integer({ min: 0, max: 12 }))
  .map(([units, scale]) => decimalText(units, scale));
const scheduleArb: fc.Arbitrary<FeeSchedule> = fc.record({
  tiers: fc.constant(DEFAULT_FEE_SCHEDULE.tiers),
  flatFeeLamportsPerHop: fc.bigInt({ min: 0n, max: U64_MAX }),
  integratorShareBps: bpsArb,
  minUsd: fc.constantFrom('0', '1', '0.01'),
});
const inputArb: fc.Arbitrary<FeeQuoteInput> = fc.record({
  amountRaw: amountArb,
  decimals: fc.integer({ min: 0, max: 18 }),
  priceUsd: priceArb,
  hops: fc.integer({ min: 3, max: 10 }),
});

describe('quoteFees: properties', () => {
  test('fee + net = amount; shares add up and never exceed their fee', () => {
    fc.assert(
      fc.property(scheduleArb, inputArb, (schedule, input) => {
        const result = quoteFees(schedule, input);
        if (!result.ok) {
          assert.equal(result.error.code, 'MH_012');
          return;
        }
        const q = result.value;
        assert.equal(q.percentFeeRaw + q.netDeliveredRaw, input.amountRaw);
        assert.ok(q.netDeliveredRaw > 0n);
        assert.ok(q.percentFeeRaw >= 0n);
        assert.equal(q.integratorPercentShareRaw + q.platformPercentShareRaw, q.percentFeeRaw);
        assert.ok(q.integratorPercentShareRaw >= 0n && q.integratorPercentShareRaw <= q.percentFeeRaw);
        assert.equal(q.integratorFlatShareLamports + q.platformFlatShareLamports, q.totalFlatFeeLamports);
        assert.ok(
          q.integratorFlatShareLamports >= 0n && q.integratorFlatShareLamports <= q.totalFlatFeeLamports,
        );
        assert.equal(q.totalFlatFeeLamports, schedule.flatFeeLamportsPerHop * BigInt(input.hops));
      }),
      { numRuns: 500 },
    );
  });

  test('the percentage fee is the exact ceiling and the share the exact floor, for every u64 amount', () => {
    fc.assert(
      fc.property(amountArb, bpsArb, bpsArb, (amount, bps, shareBps) => {
        const fee = percentFee(amount, bps);
        // ceil: fee*10000 >= amount*bps > (fee-1)*10000
        assert.ok(fee * 10_000n >= amount * BigInt(bps));
        assert.ok((fee - 1n) * 10_000n < amount * BigInt(bps));
        assert.ok(fee <= amount);
        const { integrator, platform } = splitFee(fee, shareBps);
        // floor: integrator*10000 <= fee*share < (integrator+1)*10000
        assert.ok(integrator * 10_000n <= fee * BigInt(shareBps));
        assert.ok((integrator + 1n) * 10_000n > fee * BigInt(shareBps));
        assert.equal(integrator + platform, fee);
      }),
      { numRuns: 1000 },
    );
  });

  test('no u64 amount loses precision: the quote matches a reference computed in decimal strings', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 100n, max: U64_MAX }), (amount) => {
        const q = quote(
          { amountRaw: amount, decimals: 0, priceUsd: '1', hops: 3 },
          { ...DEFAULT_FEE_SCHEDULE, minUsd: '0' },
        );
        const bps = DEFAULT_FEE_SCHEDULE.tiers.find((tier) => tier.name === q.tier)!.percentFeeBps;
        // Reference: long division on the decimal text of amount*bps.
        const product = (amount * BigInt(bps)).toString().padStart(5, '0');
        const whole = BigInt(product.slice(0, -4));
        const remainder = product.slice(-4);
        assert.equal(q.percentFeeRaw, remainder === '0000' ? whole : whole + 1n);
        assert.equal(q.usdValue, amount.toString());
      }),
      { numRuns: 500 },
    );
  });

  test('tier boundaries are exact: the first base unit at or above a boundary is the upper tier', () => {
    let checked = 0;
    fc.assert(
      fc.property(
        fc.constantFrom(...DEFAULT_FEE_SCHEDULE.tiers.slice(1)),
        fc.integer({ min: 0, max: 18 }),
        fc.bigInt({ min: 1n, max: 10n ** 12n }),
        fc.integer({ min: 0, max: 12 }),
        (tier, decimals, priceUnits, priceScale) => {
          // At price p = priceUnits / 10^priceScale, B USD is B * 10^(decimals+priceScale) / priceUnits
          // base units; its ceiling is the first amount worth at least B, one unit less is worth less.
          const scaled = BigInt(tier.minUsd) * 10n ** BigInt(decimals + priceScale);
          const atBoundary = (scaled + priceUnits - 1n) / priceUnits;
          if (atBoundary < 3n || atBoundary > U64_MAX) return; // below 2 units nothing is delivered
          checked += 1;
          const priceUsd = decimalText(priceUnits, priceScale);
          const lower = DEFAULT_FEE_SCHEDULE.tiers[DEFAULT_FEE_SCHEDULE.tiers.indexOf(tier) - 1]!;
          const at = quote({ amountRaw: atBoundary, decimals, priceUsd, hops: 3 });
          const below = quote({ amountRaw: atBoundary - 1n, decimals, priceUsd, hops: 3 });
          assert.equal(at.tier, tier.name);
          assert.equal(below.tier, lower.name);
          assert.equal(at.percentFeeBps, tier.percentFeeBps);
        },
      ),
      { numRuns: 2000 },
    );
    assert.ok(checked > 1000, `only ${checked} cases were in range`);
  });

  test('a boundary no double can tell apart: 3.333... tokens at 30 USD', () => {
    const price = '30';
    const justBelow = quote({
      amountRaw: 3_333_333_333_333_333_333n,
      decimals: 18,
      priceUsd: price,
      hops: 3,
    });
    assert.equal(justBelow.usdValue, '99.99999999999999999');
    assert.equal(justBelow.usdEquivalent, 100); // the display double rounds; the tier does not
    assert.equal(justBelow.tier, 'micro');
    const above = quote({ amountRaw: 3_333_333_333_333_333_334n, decimals: 18, priceUsd: price, hops: 3 });
    assert.equal(above.usdValue, '100.00000000000000002');
    assert.equal(above.tier, 'standard');
  });

  test('within a tier the fee never decreases as the amount grows', () => {
    fc.assert(
      fc.property(inputArb, amountArb, (input, other) => {
        const [small, large] = input.amountRaw <= other ? [input.amountRaw, other] : [other, input.amountRaw];
        const schedule = { ...DEFAULT_FEE_SCHEDULE, minUsd: '0' };
        const a = quoteFees(schedule, { ...input, amountRaw: small });
        const b = quoteFees(schedule, { ...input, amountRaw: large });
        if (!a.ok || !b.ok || a.value.tier !== b.value.tier) return;
        assert.ok(a.value.percentFeeRaw <= b.value.percentFeeRaw);
        assert.ok(a.value.netDeliveredRaw <= b.value.netDeliveredRaw);
      }),
      { numRuns: 500 },
    );
  });
});
