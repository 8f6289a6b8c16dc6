import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../../domain/clock.ts';
import type { PricingDeps, SolCostEstimator } from '../../../quotes/pricing.ts';
import type { ConfirmDeps } from '../../../route/confirm.ts';
import type { PrepareDeps } from '../../../route/prepare.ts';
import type { ReconcileDeps } from '../../../route/reconcile.ts';
import type { KeeperWorkStore } from '../../../store/keeper-work.ts';
import type { RecoveryStore } from '../../../store/recovery.ts';
import type { RouteDeploymentStore } from '../../../store/route-deployments.ts';
import type { TransferStore } from '../../../store/transfers.ts';
import type { ChangeRunner } from '../../idempotency.ts';
import { confirmBroadcastRoute } from './confirm-broadcast.ts';
import { createTransferRoute } from './create-transfer.ts';
import { estimateRoute } from './estimate.ts';
import { fundingRoutes } from './funding.ts';
import { getTransferRoutes } from './get-transfer.ts';
import { listTransfersRoute } from './list-transfers.ts';
import { prepareRoute } from './prepare.ts';
import { reclaimRentRoutes } from './reclaim-rent.ts';
import { rescueRoutes } from './rescue.ts';

export type TransferRouteDeps = PricingDeps &
  PrepareDeps &
  ConfirmDeps &
  ReconcileDeps & {
    transfers: TransferStore;
    routes: RouteDeploymentStore;
    recovery: RecoveryStore;
    keeper: KeeperWorkStore;
    solCosts: SolCostEstimator;
    runChange: ChangeRunner;
    clock: Clock;
    quoteTtlMs: number;
    fundingPollMs?: number;
  };

/** Every `/transfers` endpoint. */
export async function transferRoutes(app: FastifyInstance, deps: TransferRouteDeps) {
  await app.register(estimateRoute, deps);
  await app.register(createTransferRoute, deps);
  await app.register(listTransfersRoute, deps);
  await app.register(getTransferRoutes, deps);
  await app.register(prepareRoute, deps);
  await app.register(confirmBroadcastRoute, deps);
  await app.register(fundingRoutes, deps);
  await app.register(rescueRoutes, deps);
  await app.register(reclaimRentRoutes, deps);
}
