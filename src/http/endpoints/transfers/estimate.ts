import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { lamportsToJson } from '../../../domain/transfer-view.ts';
import { estimateFees, type PricingDeps, type SolCostEstimator } from '../../../use-cases/quote.ts';
import { limit } from '../../rate-limit.ts';
import { errorResponses } from '../../schemas/common.ts';
import { estimateBody, feeEstimateSchema, pricingFieldErrors } from '../../schemas/transfers.ts';

/** `POST /transfers/estimate`: fees in tokens and SOL, without creating anything. */
export async function estimateEndpoint(
  app: FastifyInstance,
  deps: PricingDeps & { solCosts: SolCostEstimator },
) {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/transfers/estimate',
    {
      config: { ...limit('estimate'), fieldErrors: pricingFieldErrors, idempotency: 'optional' },
      schema: {
        tags: ['Transfers'],
        operationId: 'estimateTransfer',
        summary: 'Estimate fees',
        description:
          'Fees in token units and the SOL the source wallet needs up front. The screening deposit (compliance networks) is not included. Idempotency-Key is optional here.',
        body: estimateBody,
        response: { 200: feeEstimateSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { priced, sol } = await estimateFees(deps, request.auth.settings, request.body);
      const { fees } = priced;
      return {
        tier: fees.tier,
        percentFeeBps: fees.percentFeeBps,
        percentFeeRaw: fees.percentFeeRaw.toString(),
        flatFeeLamportsPerHop: lamportsToJson(fees.flatFeeLamportsPerHop),
        totalFlatFeeLamports: lamportsToJson(fees.totalFlatFeeLamports),
        integratorPercentShare: fees.integratorPercentShareRaw.toString(),
        integratorFlatShare: lamportsToJson(fees.integratorFlatShareLamports),
        usdEquivalent: fees.usdEquivalent,
        isTestMode: request.auth.isTest,
        tokens: {
          amountRaw: request.body.amountRaw.toString(),
          feeRaw: fees.percentFeeRaw.toString(),
          netDeliveredRaw: fees.netDeliveredRaw.toString(),
          decimals: priced.decimals,
        },
        sol: {
          requiredSolUpFrontLamports: lamportsToJson(sol.requiredSolUpFrontLamports),
          breakdown: {
            routeInitRentLamports: lamportsToJson(sol.breakdown.routeInitRentLamports),
            orchestratorRentLamports: lamportsToJson(sol.breakdown.orchestratorRentLamports),
            ataRentLamports: lamportsToJson(sol.breakdown.ataRentLamports),
            transactionFeesLamports: lamportsToJson(sol.breakdown.transactionFeesLamports),
            priorityFeesLamports: lamportsToJson(sol.breakdown.priorityFeesLamports),
            protocolFlatFeeLamports: lamportsToJson(sol.breakdown.protocolFlatFeeLamports),
          },
          refundableLamports: lamportsToJson(sol.refundableLamports),
          netCostLamports: lamportsToJson(sol.netCostLamports),
        },
      };
    },
  );
}
