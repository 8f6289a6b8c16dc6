import type { Address } from '@solana/kit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AccountReader, ClockReader } from '../../../chain/types.ts';
import { AppError } from '../../../domain/errors.ts';
import type { Owner } from '../../../domain/integration.ts';
import type { Transfer } from '../../../domain/transfer.ts';
import { transferView } from '../../../domain/transfer-view.ts';
import type { TransferStore } from '../../../store/transfers.ts';
import { withCurrentRecoveryOrStored } from '../../../use-cases/recovery.ts';
import { limit } from '../../rate-limit.ts';
import { errorResponses, integerId } from '../../schemas/common.ts';
import { transferSchema } from '../../schemas/transfers.ts';

/**
 * `GET /transfers/{transferId}` and `GET /transfers/by-external/{externalId}`, with `recovery`
 * figures read from the chain now.
 */
export async function getTransferEndpoints(
  app: FastifyInstance,
  deps: { transfers: TransferStore; chain: AccountReader & ClockReader; programAddress: Address },
) {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  // The stored figures answer when the chain cannot.
  const current = (request: FastifyRequest, transfer: Transfer) =>
    withCurrentRecoveryOrStored(deps, transfer, (error) =>
      request.log.warn({ err: error, transferId: transfer.id }, 'reading the recovery figures failed'),
    );

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
      return transferView(await current(request, transfer));
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
      return transferView(await current(request, transfer));
    },
  );
}

/** MH_030 naming the parameter that was looked up; also for transfers of another integration or mode. */
export function notFound(message: string, param: 'transferId' | 'externalId' | 'startingAfter') {
  return new AppError('MH_030', message, { param });
}

/** The owner's transfer with this id, or MH_030. */
export async function loadTransfer(
  transfers: Pick<TransferStore, 'get'>,
  owner: Owner,
  id: number,
): Promise<Transfer> {
  const transfer = await transfers.get(owner, id);
  if (!transfer) throw notFound(`No transfer with id ${id}.`, 'transferId');
  return transfer;
}
