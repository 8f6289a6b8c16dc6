import type { FastifyInstance } from 'fastify';
import type { ClaimDeps } from '../../../rewards/claims.ts';
import { claimRoute } from './claim.ts';
import { listClaimsRoute } from './list-claims.ts';
import { type RewardRouteDeps, rewardsRoutes } from './rewards.ts';

/** Every `/rewards` endpoint. */
export async function rewardRoutes(
  app: FastifyInstance,
  deps: RewardRouteDeps & { claims: ClaimDeps; claimWaitMs?: number },
) {
  await app.register(rewardsRoutes, deps);
  await app.register(claimRoute, deps);
  await app.register(listClaimsRoute, deps);
}
