import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { TRANSFER_STATUSES } from '../../../domain/transfer.ts';
import { transferView } from '../../../domain/transfer-view.ts';
import type { TransferStore } from '../../../store/transfers.ts';
import { limit } from '../../rate-limit.ts';
import { errorResponses, pageLimit, pageOffset, paginationSchema } from '../../schemas/common.ts';
import { transferSchema } from '../../schemas/transfers.ts';

const query = z
  .object({
    status: z.enum(TRANSFER_STATUSES).optional(),
    fromDate: z.iso.datetime({ offset: true }).optional().describe('Created at or after (inclusive).'),
    toDate: z.iso.datetime({ offset: true }).optional().describe('Created before (exclusive).'),
    externalId: z.string().min(1).max(128).optional(),
    supportBundleId: z.string().min(1).max(32).optional(),
    limit: pageLimit,
    offset: pageOffset,
  })
  .strict();

/** `GET /transfers`: newest first, filters combined with AND, exact total. */
export async function listTransfersEndpoint(app: FastifyInstance, deps: { transfers: TransferStore }) {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/transfers',
    {
      config: limit('listTransfers'),
      schema: {
        tags: ['Transfers'],
        operationId: 'listTransfers',
        summary: 'List transfers',
        description: 'Newest first (createdAt, then id, descending). `limit` 1 to 100, default 50.',
        querystring: query,
        response: {
          200: z.object({ items: z.array(transferSchema), pagination: paginationSchema }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const { limit: pageSize, offset, fromDate, toDate, ...filters } = request.query;
      const page = await deps.transfers.list(
        request.auth.owner,
        {
          ...filters,
          fromDate: fromDate ? new Date(fromDate) : undefined,
          toDate: toDate ? new Date(toDate) : undefined,
        },
        { limit: pageSize, offset },
      );
      return {
        items: page.items.map(transferView),
        pagination: { total: page.total, limit: pageSize, offset },
      };
    },
  );
}
