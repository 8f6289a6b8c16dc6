import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../../domain/errors.ts';
import { transferView } from '../../../domain/transfer-view.ts';
import type { TransferStore } from '../../../store/transfers.ts';
import { limit } from '../../rate-limit.ts';
import { errorResponses, integerId } from '../../schemas/common.ts';
import { transferSchema } from '../../schemas/transfers.ts';

/** `GET /transfers/{transferId}` and `GET /transfers/by-external/{externalId}`. */
export async function getTransferRoutes(app: FastifyInstance, deps: { transfers: TransferStore }) {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    '/transfers/:transferId',
    {
      config: limit('getTransfer'),
      schema: {
        tags: ['Transfers'],
        operationId: 'getTransfer',
        summary: 'Get a transfer',
        params: z.object({ transferId: integerId }),
        response: { 200: transferSchema, ...errorResponses },
      },
    },
    async (request) => {
      const owner = request.auth.owner;
      const transfer = await deps.transfers.get(owner, request.params.transferId);
      if (!transfer) throw notFound(`No transfer with id ${request.params.transferId}.`, 'transferId');
      return transferView(transfer);
    },
  );

  routes.get(
    '/transfers/by-external/:externalId',
    {
      config: limit('getTransferByExternalId'),
      schema: {
        tags: ['Transfers'],
        operationId: 'getTransferByExternalId',
        summary: 'Get a transfer by your externalId',
        params: z.object({ externalId: z.string().min(1).max(128) }),
        response: { 200: transferSchema, ...errorResponses },
      },
    },
    async (request) => {
      const owner = request.auth.owner;
      const transfer = await deps.transfers.getByExternalId(owner, request.params.externalId);
      if (!transfer)
        throw notFound(`No transfer with externalId "${request.params.externalId}".`, 'externalId');
      return transferView(transfer);
    },
  );
}

/** MH_030 naming the path parameter that was looked up; also for transfers of another integration or mode. */
export function notFound(message: string, param: 'transferId' | 'externalId') {
  return new AppError('MH_030', message, { param });
}
