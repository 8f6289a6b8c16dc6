import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  escalatedPrice,
  hopBudgetPrice,
  hopFeeBudgetLamports,
  hopPriorityBudgetLamports,
  type KeeperPricing,
  keeperFundingLamports,
  keeperTransactionPrice,
  marketPrice,
  type PriorityFeePolicy,
  type SlotPrice,
} from './priority-fees.ts';
import { LAMPORTS_PER_SIGNATURE, priorityFeeLamports } from './route.ts';

const POLICY: PriorityFeePolicy = {
  floorMicroLamportsPerCu: 1_000n,
  capMicroLamportsPerCu: 1_000_000n,
  hopBudgetMultiplier: 8,
};

/** Slot entries in slot order, as getRecentPrioritizationFees lists them, the last at slot 1,000. */
const slots = (prices: readonly bigint[]): SlotPrice[] =>
  prices.map((prioritizationFee, i) => ({ slot: BigInt(1_000 - prices.length + 1 + i), prioritizationFee }));

describe('the market price', () => {
  test('the 75th percentile of the recent slots, within floor and cap', () => {
    const recent = slots([0n, 0n, 5_000n, 7_000n, 9_000n, 2_000n, 0n, 8_000n]);
    // Sorted: 0 0 0 2000 5000 7000 8000 9000; index floor(0.75 * 8) = 6.
    assert.equal(marketPrice(recent, POLICY), 8_000n);
    assert.equal(marketPrice(slots([0n, 0n, 0n, 900n]), POLICY), 1_000n, 'the floor');
    assert.equal(marketPrice(slots([5_000_000n]), POLICY), 1_000_000n, 'the cap');
    assert.equal(marketPrice([], POLICY), 1_000n, 'nothing recent: the floor');
  });

  test('a price paid in a quarter of the slots or fewer does not move it, unless it is the price now', () => {
    const calm = { ...POLICY, floorMicroLamportsPerCu: 0n };
    const spike = [...Array<bigint>(37).fill(50_000n), ...Array<bigint>(113).fill(0n)];
    assert.equal(marketPrice(slots(spike), calm), 0n, 'a spike that passed');
    assert.equal(marketPrice(slots([...spike, 50_000n]), calm), 50_000n, 'in more than a quarter');
    // Congestion now: the latest slot charged 20,000, from its first congested slot on.
    const now = [...Array<bigint>(149).fill(0n), 20_000n];
    assert.equal(marketPrice(slots(now), calm), 20_000n);
    // Listed in any order, the slots say which is the latest.
    assert.equal(marketPrice(slots(now).reverse(), calm), 20_000n);
    // Congestion that passed: the latest slot is calm again.
    assert.equal(marketPrice(slots([...now.slice(0, -3), 30_000n, 25_000n, 0n]), calm), 0n);
  });
});

describe('escalation', () => {
  test('each expiry doubles the price, a step up at least, never above the cap', () => {
    const steps: bigint[] = [0n];
    for (let i = 0; i < 8; i++) steps.push(escalatedPrice(steps.at(-1)!, POLICY.capMicroLamportsPerCu));
    assert.deepEqual(steps, [
      0n,
      10_000n,
      20_000n,
      40_000n,
      80_000n,
      160_000n,
      320_000n,
      640_000n,
      1_000_000n,
    ]);
    assert.equal(escalatedPrice(3_000n, 1_000_000n), 13_000n, 'a step up from a low price');
    assert.equal(escalatedPrice(1_000_000n, 1_000_000n), 1_000_000n, 'at the cap it stays');
    assert.equal(escalatedPrice(0n, 0n), 0n, 'a cap of 0: no priority fees at all');
  });
});

describe('the route’s fee budget', () => {
  test('priced at the multiplier times the starting price, an escalation step at least, at most the cap', () => {
    assert.equal(hopBudgetPrice(0n, POLICY), 80_000n);
    assert.equal(hopBudgetPrice(50_000n, POLICY), 400_000n);
    assert.equal(hopBudgetPrice(200_000n, POLICY), 1_000_000n);
    assert.equal(hopBudgetPrice(0n, { ...POLICY, capMicroLamportsPerCu: 0n }), 0n);
  });

  test('the keeper is funded with its rent and, per hop and one more, a signature and the priority at the budget’s price', () => {
    const budget = { hops: 3, hopComputeUnitLimit: 25_000, budgetMicroLamportsPerCu: 80_000n };
    // 25,000 units at 0.08 lamports: 2,000 lamports per hop.
    assert.equal(hopPriorityBudgetLamports(budget), 4n * 2_000n);
    assert.equal(hopFeeBudgetLamports(budget), 4n * 5_000n + 4n * 2_000n);
    assert.equal(keeperFundingLamports({ ...budget, rentExemptMinimum: 890_880n }), 890_880n + 28_000n);
    // Rounded up per hop, as the runtime charges each transaction.
    assert.equal(hopPriorityBudgetLamports({ ...budget, budgetMicroLamportsPerCu: 1n }), 4n);
  });
});

describe('the price of a keeper transaction', () => {
  // Hop 1 of 3 of a route funded as above: 28,000 lamports of fees, nothing spent yet.
  const hop: KeeperPricing = {
    market: 1_000n,
    least: 0n,
    capMicroLamportsPerCu: 1_000_000n,
    computeUnitLimit: 20_000,
    budgetLamports: 28_000n,
    spentLamports: 0n,
    reservedSignatures: 3,
  };

  test('the market’s price, or the escalated one when higher, at most the cap', () => {
    assert.equal(keeperTransactionPrice(hop), 1_000n);
    assert.equal(keeperTransactionPrice({ ...hop, least: 20_000n }), 20_000n);
    assert.equal(keeperTransactionPrice({ ...hop, market: 30_000n, least: 20_000n }), 30_000n);
    assert.equal(
      keeperTransactionPrice({ ...hop, least: 2_000_000n, budgetLamports: 10n ** 12n }),
      1_000_000n,
    );
  });

  test('within the budget: what was spent, this fee and the signatures still to come', () => {
    // Left for this hop's priority: 28,000 - 5,000 (its signature) - 3 × 5,000 = 8,000 lamports,
    // i.e. 400,000 micro-lamports for each of its 20,000 units.
    assert.equal(keeperTransactionPrice({ ...hop, market: 1_000_000n }), 400_000n);
    assert.equal(priorityFeeLamports(20_000, 400_000n), 8_000n);
    // Hop 2 after hop 1 spent 5,000 + 8,000: 28,000 - 13,000 - 5,000 - 2 × 5,000 = 0 left.
    assert.equal(
      keeperTransactionPrice({ ...hop, market: 1_000_000n, spentLamports: 13_000n, reservedSignatures: 2 }),
      0n,
    );
    // Spent past the budget (transactions that failed on chain paid too): nothing above the base fee.
    assert.equal(keeperTransactionPrice({ ...hop, spentLamports: 40_000n }), 0n);
    // A price the limit does not divide is rounded down.
    assert.equal(keeperTransactionPrice({ ...hop, market: 1_000_000n, computeUnitLimit: 30_000 }), 266_666n);
  });

  test('never spends past the budget, whatever the market, escalation and what was spent', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 9n }),
        fc.bigInt({ min: 0n, max: 10n ** 9n }),
        fc.bigInt({ min: 0n, max: 10n ** 9n }),
        fc.integer({ min: 1, max: 1_400_000 }),
        fc.bigInt({ min: 0n, max: 10n ** 8n }),
        fc.bigInt({ min: 0n, max: 10n ** 8n }),
        fc.integer({ min: 0, max: 11 }),
        (market, least, cap, computeUnitLimit, budgetLamports, spentLamports, reservedSignatures) => {
          const input = {
            market,
            least,
            capMicroLamportsPerCu: cap,
            computeUnitLimit,
            budgetLamports,
            spentLamports,
            reservedSignatures,
          };
          const price = keeperTransactionPrice(input);
          assert.ok(price <= cap && (price <= market || price <= least));
          if (price === 0n) return;
          const fee = LAMPORTS_PER_SIGNATURE + priorityFeeLamports(computeUnitLimit, price);
          const reserved = LAMPORTS_PER_SIGNATURE * BigInt(reservedSignatures);
          assert.ok(spentLamports + fee + reserved <= budgetLamports);
        },
      ),
    );
  });
});
