import type { FastifyInstance } from 'fastify';
import type { ClaimDeps } from '../../../use-cases/claim-rewards.ts';
import { claimEndpoint } from './claim.ts';
import { listClaimsEndpoint } from './list-claims.ts';
import { type RewardEndpointDeps, rewardsEndpoints } from './rewards.ts';

/** Every `/rewards` endpoint. */
export async function rewardEndpoints(
  app: FastifyInstance,
  deps: RewardEndpointDeps & { claims: ClaimDeps; claimWaitMs?: number },
) {
  await app.register(rewardsEndpoints, deps);
  await app.register(claimEndpoint, deps);
  await app.register(listClaimsEndpoint, deps);
}
