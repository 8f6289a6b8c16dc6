import type { FastifyInstance } from 'fastify';
import { listClaimsRoute } from './list-claims.ts';
import { type RewardRouteDeps, rewardsRoutes } from './rewards.ts';

/** Every `/rewards` endpoint. */
export async function rewardRoutes(app: FastifyInstance, deps: RewardRouteDeps) {
  await app.register(rewardsRoutes, deps);
  await app.register(listClaimsRoute, deps);
}
