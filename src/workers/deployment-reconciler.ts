import type { Logger } from 'pino';
import { type ReconcileDeps, reconcileDeployment } from '../use-cases/reconcile.ts';
import { drainClaims, runPeriodically } from './periodic.ts';

/**
 * Looks at the chain for every prepared transfer, every `intervalMs` (decisions: 30 s), until its
 * deployment is over: takes over routes found complete, and settles abandoned deployments as
 * expired or recoverable (src/use-cases/reconcile.ts). Several processes share the work: each transfer
 * is claimed for one interval, so a crashed process's claims come back.
 */
export function createDeploymentReconciler(
  deps: ReconcileDeps & {
    log: Pick<Logger, 'info' | 'warn' | 'error'>;
    intervalMs?: number;
    batchSize?: number;
  },
) {
  const intervalMs = deps.intervalMs ?? 30_000;
  const batchSize = deps.batchSize ?? 50;
  /** Reconciles every transfer due now; answers how many it looked at. */
  async function runOnce(): Promise<number> {
    return drainClaims({
      claim: () => deps.deployments.claimAwaitingDeployment(deps.clock.now(), intervalMs, batchSize),
      batchSize,
      handle: async (transfer) => {
        const after = await reconcileDeployment(deps, transfer);
        if (after.phase !== transfer.phase) {
          deps.log.info(
            { transferId: transfer.id, from: transfer.phase, to: after.phase },
            'deployment reconciled',
          );
        }
      },
      onItemError: (transfer, error) =>
        deps.log.warn({ err: error, transferId: transfer.id }, 'reconciling a deployment failed'),
    });
  }

  return runPeriodically({
    runOnce,
    intervalMs,
    onError: (error) => deps.log.error({ err: error }, 'deployment reconciliation failed'),
  });
}
