import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { minimumClaimLamports } from '../../../domain/rewards.ts';
import { CLAIM_WAIT_MS, type ClaimDeps, claimRewards } from '../../../use-cases/claim-rewards.ts';
import { limit } from '../../rate-limit.ts';
import { errorResponses } from '../../schemas/common.ts';
import { claimSchema, claimView } from '../../schemas/rewards.ts';

/** `POST /rewards/claim`: pays everything claimable to the rewards wallet. */
export async function claimEndpoint(
  app: FastifyInstance,
  deps: { claims: ClaimDeps; minClaimLamports: bigint; claimWaitMs?: number },
) {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/rewards/claim',
    {
      config: limit('rewardsClaim'),
      schema: {
        tags: ['Rewards'],
        operationId: 'claimRewards',
        summary: 'Claim rewards',
        description:
          'Pays everything claimable to the rewards wallet in one on-chain transaction, withdrawn from the fees the router program holds for the platform: the lamports, and each mint’s tokens (the native mint’s as SOL). A missing token account of the wallet is created when the claimable lamports cover its rent, which is deducted and shown as `rentLamports`; otherwise that mint stays claimable. Answers once the payout is confirmed or failed (its amounts then claimable again), or `pending` if it has not landed within 20 s: the service completes it and GET /rewards/claims shows it. MH_061 without a rewards wallet; MH_060 when the claimable lamports are below `minimumClaimLamports`, also when another claim just took them.',
        response: { 200: z.object({ claim: claimSchema }), ...errorResponses },
      },
    },
    async (request) => {
      const { owner, settings, apiKeyId } = request.auth;
      // The route requires an Idempotency-Key, validated before the handler runs.
      const idempotencyKey = String(request.headers['idempotency-key']);
      const claim = await claimRewards(
        deps.claims,
        {
          owner,
          minimumLamports: minimumClaimLamports(settings, deps.minClaimLamports),
          request: { apiKeyId, idempotencyKey },
        },
        { waitMs: deps.claimWaitMs ?? CLAIM_WAIT_MS, log: request.log },
      );
      return { claim: claimView(claim) };
    },
  );
}
