import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../../domain/clock.ts';
import type { TransferStore } from '../../../store/transfers.ts';
import { createTransferRoute } from './create-transfer.ts';
import { estimateRoute, type SolCostEstimator } from './estimate.ts';
import { getTransferRoutes } from './get-transfer.ts';
import { listTransfersRoute } from './list-transfers.ts';
import type { PricingDeps } from './pricing.ts';

export type TransferRouteDeps = PricingDeps & {
  transfers: TransferStore;
  solCosts: SolCostEstimator;
  clock: Clock;
  quoteTtlMs: number;
};

/** Every `/transfers` endpoint. */
export async function transferRoutes(app: FastifyInstance, deps: TransferRouteDeps) {
  await app.register(estimateRoute, deps);
  await app.register(createTransferRoute, deps);
  await app.register(listTransfersRoute, deps);
  await app.register(getTransferRoutes, deps);
}
