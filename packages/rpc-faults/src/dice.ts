// Reproducible draws: the n-th draw of a seed is the SHA-256 of `seed:n` read as a number in [0, 1),
// so a run repeats exactly from its seed, whatever the platform.
import { createHash } from 'node:crypto';

/** A sequence of draws in [0, 1) fixed by its seed. */
export interface Dice {
  /** The next draw, uniform in [0, 1). */
  next(): number;
  /** Whether the next draw falls below `rate` (never for 0, always for 1). */
  chance(rate: number): boolean;
  /** The next draw of an exponential distribution of mean `mean` (the wait between random events). */
  exponential(mean: number): number;
}

/** The draws of `seed`. */
export function createDice(seed: string): Dice {
  let count = 0;
  const next = () => createHash('sha256').update(`${seed}:${count++}`).digest().readUIntBE(0, 6) / 2 ** 48;
  return {
    next,
    chance: (rate) => rate > 0 && next() < rate,
    exponential: (mean) => -mean * Math.log(1 - next()),
  };
}
