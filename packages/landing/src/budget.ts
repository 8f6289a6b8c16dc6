import type { Instruction } from '@solana/kit';
import {
  getSetComputeUnitLimitInstruction,
  getSetComputeUnitPriceInstruction,
} from '@solana-program/compute-budget';

/*
 * A transaction's compute budget: what it pays per compute unit and how many units it may use.
 * Its instructions come first (an instruction after the program's would reset the return data
 * that reports what the program did), and the limit is what simulating the transaction used plus
 * a margin, never a fixed figure that the version of a program (p-token, or the legacy SPL Token
 * program whose token instructions cost far more) could break.
 */

/** Largest compute-unit limit a transaction may ask for: what it is simulated with. */
export const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;

/**
 * The compute-unit limit of a transaction that used `unitsConsumed` in simulation: a tenth more
 * and a thousand units, for the state to move a little before it lands.
 */
export const withMargin = (unitsConsumed: number) => Math.ceil(unitsConsumed * 1.1) + 1_000;

/**
 * A transaction's compute-unit limit: what its simulation used with the margin, or, when the
 * simulation told nothing (it failed, or needs what an earlier transaction creates),
 * `fallbackUnits`, measured for that kind of transaction on the legacy SPL Token program.
 */
export const computeUnitLimit = (unitsConsumed: number | null, fallbackUnits: number) =>
  unitsConsumed === null ? fallbackUnits : withMargin(unitsConsumed);

/** The compute-budget instructions a transaction starts with: its price per unit, then its limit. */
export function computeBudgetInstructions(budget: {
  microLamportsPerCu: bigint;
  computeUnitLimit: number;
}): Instruction[] {
  return [
    getSetComputeUnitPriceInstruction({ microLamports: budget.microLamportsPerCu }),
    getSetComputeUnitLimitInstruction({ units: budget.computeUnitLimit }),
  ];
}
