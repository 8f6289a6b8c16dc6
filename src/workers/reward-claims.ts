import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import type { BalanceReader, TokenAccountReader } from '../chain/types.ts';
import { type ClaimDeps, resumeClaims } from '../use-cases/claim-rewards.ts';
import { type CoverageLine, rewardCoverage } from '../use-cases/coverage.ts';
import { runPeriodically } from './periodic.ts';

/** Prometheus gauges of what integrators are owed and how much of it the platform's earnings lack. */
export function rewardMetrics(registry: Registry) {
  const labelNames = ['asset'] as const;
  const owed = new Gauge({
    name: 'rewards_owed',
    help: 'What integrators are owed (claimable plus pending claims), lamports or raw units of a mint (asset).',
    labelNames,
    registers: [registry],
  });
  const shortfall = new Gauge({
    name: 'rewards_shortfall',
    help: 'How much less than is owed the platform’s earnings in the protocol config hold (0 when they cover it): alert above 0.',
    labelNames,
    registers: [registry],
  });
  return (lines: readonly CoverageLine[]) => {
    owed.reset();
    shortfall.reset();
    for (const line of lines) {
      owed.set({ asset: line.asset }, Number(line.owed));
      shortfall.set({ asset: line.asset }, Number(line.shortfall));
    }
  };
}

/**
 * Completes reward claims whose sender stopped before their payout was settled (its process died,
 * or its request stopped waiting): once a claim's lease lapses, sends its stored transaction
 * again and records it confirmed, or failed with its amounts claimable again. Safe in several
 * processes at once: each claim is taken over with `SKIP LOCKED` under a new lease. Each round
 * also compares what integrators are owed with what the platform's earnings hold, for the
 * `rewards_shortfall` metric and a warning.
 */
export function createRewardClaimWorker(
  deps: ClaimDeps & {
    chain: ClaimDeps['chain'] & BalanceReader & TokenAccountReader;
    log: Pick<Logger, 'info' | 'warn'>;
    metrics?: Registry;
    intervalMs?: number;
  },
) {
  const record = deps.metrics ? rewardMetrics(deps.metrics) : undefined;
  /** Takes over every lapsed claim now, then checks the platform's coverage; answers how many claims it took over. */
  async function runOnce(): Promise<number> {
    const resumed = await resumeClaims(deps);
    if (resumed > 0) deps.log.info({ resumed }, 'resumed pending reward claims');
    const coverage = await rewardCoverage({ ...deps, config: deps.platform.configAddress });
    record?.(coverage);
    for (const line of coverage.filter((entry) => entry.shortfall > 0n)) {
      deps.log.warn(
        {
          asset: line.asset,
          owed: String(line.owed),
          held: String(line.held),
          shortfall: String(line.shortfall),
        },
        'the platform’s earnings hold less than integrators can claim',
      );
    }
    return resumed;
  }
  return runPeriodically({
    runOnce,
    intervalMs: deps.intervalMs ?? 15_000,
    onError: (error) => deps.log.warn({ err: error }, 'resuming reward claims failed; retrying later'),
  });
}
