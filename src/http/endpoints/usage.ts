import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../domain/errors.ts';
import { TRANSFER_STATUSES } from '../../domain/transfer.ts';
import { lamportsToJson } from '../../domain/transfer-view.ts';
import { USAGE_COUNT_FIELDS, type UsageCountField } from '../../domain/usage.ts';
import type { RewardStore } from '../../store/rewards.ts';
import type { TransferStore } from '../../store/transfers.ts';
import { limit } from '../rate-limit.ts';
import { errorResponses } from '../schemas/common.ts';

/** One count per status, named after it (`USAGE_COUNT_FIELDS`), in the statuses' order. */
const statusCounts = Object.fromEntries(
  TRANSFER_STATUSES.map((status) => [
    USAGE_COUNT_FIELDS[status],
    z.int().min(0).describe(`Transfers whose status is now \`${status}\`.`),
  ]),
) as Record<UsageCountField, z.ZodInt>;

const usageSchema = z
  .looseObject({
    totalTransfers: z
      .int()
      .min(0)
      .describe(
        'Transfers created in the window. Each counts once, under its status now: the counts per status add up to it.',
      ),
    ...statusCounts,
    totalVolumeUsd: z.number().describe('Sum of the USD equivalent (at quote time) of completed transfers.'),
    totalRevenueLamports: z
      .int()
      .describe("The integrator's share of the flat fees of settled transfers, as its rewards credited it."),
    revenueByMint: z
      .record(z.string(), z.string().regex(/^\d+$/))
      .describe(
        "The integrator's share of the percentage fees of settled transfers, raw units per mint, as its rewards credited it.",
      ),
    isTestMode: z.boolean(),
    fromDate: z.iso.datetime().nullable(),
    toDate: z.iso.datetime().nullable(),
  })
  .meta({ id: 'UsageSummary' });

/** `GET /usage`: counts, volume and revenue of transfers created in a window. */
export async function usageEndpoints(
  app: FastifyInstance,
  deps: { transfers: TransferStore; rewards: RewardStore },
) {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/usage',
    {
      config: limit('usage'),
      schema: {
        tags: ['Usage'],
        operationId: 'getUsage',
        summary: 'Usage summary',
        description:
          'Over transfers created in [fromDate, toDate) (both optional) by this integration in the key’s mode.',
        querystring: z
          .object({
            fromDate: z.iso.datetime({ offset: true }).optional(),
            toDate: z.iso.datetime({ offset: true }).optional(),
          })
          .strict(),
        response: { 200: usageSchema, ...errorResponses },
      },
    },
    async (request) => {
      const from = request.query.fromDate ? new Date(request.query.fromDate) : undefined;
      const to = request.query.toDate ? new Date(request.query.toDate) : undefined;
      if (from && to && from.getTime() > to.getTime()) {
        throw new AppError('MH_016', 'fromDate must not be after toDate.', { param: 'fromDate' });
      }
      const [usage, revenue] = await Promise.all([
        deps.transfers.usage(request.auth.owner, { from, to }),
        deps.rewards.revenue(request.auth.owner, { from, to }),
      ]);
      return {
        ...usage,
        totalRevenueLamports: lamportsToJson(revenue.lamports),
        revenueByMint: Object.fromEntries(
          revenue.byMint.map((entry) => [entry.mint, entry.amountRaw.toString()]),
        ),
        isTestMode: request.auth.isTest,
        fromDate: from?.toISOString() ?? null,
        toDate: to?.toISOString() ?? null,
      };
    },
  );
}
