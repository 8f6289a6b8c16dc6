import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  COMPUTE_BUDGET_PROGRAM_ADDRESS,
  ComputeBudgetInstruction,
  getSetComputeUnitLimitInstructionDataDecoder,
  getSetComputeUnitPriceInstructionDataDecoder,
  identifyComputeBudgetInstruction,
} from '@solana-program/compute-budget';
import { computeBudgetInstructions, computeUnitLimit, withMargin } from './budget.ts';

test('a compute-unit limit is what the simulation used, a tenth more and a thousand units; the fallback when it told nothing', () => {
  assert.equal(withMargin(20_000), 23_000);
  assert.equal(withMargin(18_601), 21_462, 'rounded up');
  assert.equal(computeUnitLimit(20_000, 70_000), 23_000);
  assert.equal(computeUnitLimit(null, 70_000), 70_000);
});

test('the compute budget is two instructions of the Compute Budget program: the price per unit, then the limit', () => {
  const [price, limit, ...rest] = computeBudgetInstructions({
    microLamportsPerCu: 5_000n,
    computeUnitLimit: 23_000,
  });
  assert.deepEqual(rest, []);
  assert.equal(price?.programAddress, COMPUTE_BUDGET_PROGRAM_ADDRESS);
  assert.equal(limit?.programAddress, COMPUTE_BUDGET_PROGRAM_ADDRESS);
  assert.equal(identifyComputeBudgetInstruction(price.data!), ComputeBudgetInstruction.SetComputeUnitPrice);
  assert.equal(getSetComputeUnitPriceInstructionDataDecoder().decode(price.data!).microLamports, 5_000n);
  assert.equal(identifyComputeBudgetInstruction(limit.data!), ComputeBudgetInstruction.SetComputeUnitLimit);
  assert.equal(getSetComputeUnitLimitInstructionDataDecoder().decode(limit.data!).units, 23_000);
});
