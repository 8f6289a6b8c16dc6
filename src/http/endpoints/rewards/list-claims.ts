import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RewardStore } from '../../../store/rewards.ts';
import { limit } from '../../rate-limit.ts';
import { errorResponses, pageLimit, pageOffset, paginationSchema } from '../../schemas/common.ts';
import { claimSchema, claimView } from '../../schemas/rewards.ts';

/** `GET /rewards/claims`: newest first, paginated as the transfer list is. */
export async function listClaimsEndpoint(app: FastifyInstance, deps: { rewards: RewardStore }) {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/rewards/claims',
    {
      config: limit('rewardClaims'),
      schema: {
        tags: ['Rewards'],
        operationId: 'listRewardClaims',
        summary: 'List reward claims',
        description: 'Newest first (createdAt, then id, descending). `limit` 1 to 100, default 50.',
        querystring: z.object({ limit: pageLimit, offset: pageOffset }).strict(),
        response: {
          200: z.object({ items: z.array(claimSchema), pagination: paginationSchema }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const { limit: pageSize, offset } = request.query;
      const page = await deps.rewards.listClaims(request.auth.owner, { limit: pageSize, offset });
      return { items: page.items.map(claimView), pagination: { total: page.total, limit: pageSize, offset } };
    },
  );
}
