import assert from 'node:assert/strict';
import { test } from 'node:test';
import { summariseSolCosts } from './sol-costs.ts';

test('the up-front requirement is the sum of the six items; net cost subtracts what comes back', () => {
  const breakdown = {
    routeInitRentLamports: 16_648_320n,
    orchestratorRentLamports: 1_280_640n,
    ataRentLamports: 16_314_240n,
    transactionFeesLamports: 90_000n,
    priorityFeesLamports: 1_234n,
    protocolFlatFeeLamports: 70_000n,
  };
  assert.deepEqual(summariseSolCosts({ breakdown, refundableLamports: 32_203_920n }), {
    requiredSolUpFrontLamports: 34_404_434n,
    breakdown,
    refundableLamports: 32_203_920n,
    netCostLamports: 2_200_514n,
  });
  assert.throws(() => summariseSolCosts({ breakdown, refundableLamports: 34_404_435n }), RangeError);
});
