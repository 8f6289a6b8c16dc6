import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../../domain/clock.ts';
import type { PricingDeps, SolCostEstimator } from '../../../quotes/pricing.ts';
import type { TransferStore } from '../../../store/transfers.ts';
import type { ChangeRunner } from '../../idempotency.ts';
import { createTransferRoute } from './create-transfer.ts';
import { estimateRoute } from './estimate.ts';
import { getTransferRoutes } from './get-transfer.ts';
import { listTransfersRoute } from './list-transfers.ts';

export type TransferRouteDeps = PricingDeps & {
  transfers: TransferStore;
  solCosts: SolCostEstimator;
  runChange: ChangeRunner;
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
