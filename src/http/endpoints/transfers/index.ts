import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../../domain/clock.ts';
import type { DeploymentStore } from '../../../store/deployments.ts';
import type { HopStore } from '../../../store/hops.ts';
import type { RecoveryStore } from '../../../store/recovery.ts';
import type { TransferStore } from '../../../store/transfers.ts';
import type { ConfirmDeps } from '../../../use-cases/confirm.ts';
import type { PrepareDeps } from '../../../use-cases/prepare.ts';
import type { PricingDeps, SolCostEstimator } from '../../../use-cases/quote.ts';
import type { ReconcileDeps } from '../../../use-cases/reconcile.ts';
import type { ChangeRunner } from '../../idempotency.ts';
import { confirmBroadcastEndpoint } from './confirm-broadcast.ts';
import { createTransferEndpoint } from './create-transfer.ts';
import { estimateEndpoint } from './estimate.ts';
import { fundingEndpoints } from './funding.ts';
import { getTransferEndpoints } from './get-transfer.ts';
import { listTransfersEndpoint } from './list-transfers.ts';
import { prepareEndpoint } from './prepare.ts';
import { reclaimRentEndpoints } from './reclaim-rent.ts';
import { rescueEndpoints } from './rescue.ts';

export type TransferEndpointDeps = PricingDeps &
  PrepareDeps &
  ConfirmDeps &
  ReconcileDeps & {
    transfers: TransferStore;
    deployments: DeploymentStore;
    recovery: RecoveryStore;
    hops: HopStore;
    solCosts: SolCostEstimator;
    runChange: ChangeRunner;
    clock: Clock;
    quoteTtlMs: number;
    fundingPollMs?: number;
  };

/** Every `/transfers` endpoint. */
export async function transferEndpoints(app: FastifyInstance, deps: TransferEndpointDeps) {
  await app.register(estimateEndpoint, deps);
  await app.register(createTransferEndpoint, deps);
  await app.register(listTransfersEndpoint, deps);
  await app.register(getTransferEndpoints, deps);
  await app.register(prepareEndpoint, deps);
  await app.register(confirmBroadcastEndpoint, deps);
  await app.register(fundingEndpoints, deps);
  await app.register(rescueEndpoints, deps);
  await app.register(reclaimRentEndpoints, deps);
}
