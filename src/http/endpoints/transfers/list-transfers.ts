import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { TRANSFER_STATUSES } from '../../../domain/transfer.ts';
import { transferView } from '../../../domain/transfer-view.ts';
import type { TransferStore } from '../../../store/transfers.ts';
import { limit } from '../../rate-limit.ts';
import {
  cursorPaginationSchema,
  errorResponses,
  integerId,
  pageLimit,
  pageOffset,
} from '../../schemas/common.ts';
import { transferSchema } from '../../schemas/transfers.ts';
import { notFound } from './get-transfer.ts';

const query = z
  .object({
    status: z.enum(TRANSFER_STATUSES).optional(),
    fromDate: z.iso.datetime({ offset: true }).optional().describe('Created at or after (inclusive).'),
    toDate: z.iso.datetime({ offset: true }).optional().describe('Created before (exclusive).'),
    externalId: z.string().min(1).max(128).optional(),
    supportBundleId: z.string().min(1).max(32).optional(),
    limit: pageLimit,
    offset: pageOffset.describe('Transfers to skip (after `startingAfter` when both are given).'),
    startingAfter: integerId
      .optional()
      .describe(
        'The id of a transfer of yours, usually the last of the previous page: the page continues the listing after it. Unlike `offset`, it costs the same on every page, and no transfer is skipped or shown twice when new ones arrive meanwhile.',
      ),
  })
  .strict();

/** `GET /transfers`: newest first, filters combined with AND, exact total, by offset or cursor. */
export async function listTransfersEndpoint(app: FastifyInstance, deps: { transfers: TransferStore }) {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/transfers',
    {
      config: limit('listTransfers'),
      schema: {
        tags: ['Transfers'],
        operationId: 'listTransfers',
        summary: 'List transfers',
        description:
          'Newest first (createdAt, then id, descending). `limit` 1 to 100, default 50. To page through, pass the last id of a page as `startingAfter` while `pagination.hasMore` is true. `pagination.total` counts every transfer matching the filters, whatever the page.',
        querystring: query,
        response: {
          200: z.object({ items: z.array(transferSchema), pagination: cursorPaginationSchema }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const { limit: pageSize, offset, startingAfter, fromDate, toDate, ...filters } = request.query;
      const page = await deps.transfers.list(
        request.auth.owner,
        {
          ...filters,
          fromDate: fromDate ? new Date(fromDate) : undefined,
          toDate: toDate ? new Date(toDate) : undefined,
        },
        { limit: pageSize, offset, startingAfter },
      );
      if (!page) throw notFound(`No transfer with id ${startingAfter} to start after.`, 'startingAfter');
      return {
        items: page.items.map(transferView),
        pagination: { total: page.total, limit: pageSize, offset, hasMore: page.hasMore },
      };
    },
  );
}
