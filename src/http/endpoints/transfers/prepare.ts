import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { transferView } from '../../../domain/transfer-view.ts';
import type { TransferStore } from '../../../store/transfers.ts';
import { type PrepareDeps, prepareTransfer } from '../../../use-cases/prepare.ts';
import type { ChangeRunner } from '../../idempotency.ts';
import { limit } from '../../rate-limit.ts';
import { errorResponses, integerId, noBody } from '../../schemas/common.ts';
import { prepareResponseSchema } from '../../schemas/transfers.ts';
import { loadTransfer } from './get-transfer.ts';

/** `POST /transfers/{transferId}/prepare`: the bundle the source signs to deploy the route. */
export async function prepareEndpoint(
  app: FastifyInstance,
  deps: PrepareDeps & { transfers: TransferStore; runChange: ChangeRunner },
) {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/transfers/:transferId/prepare',
    {
      config: limit('prepare'),
      schema: {
        tags: ['Transfers'],
        operationId: 'prepareTransfer',
        summary: 'Prepare the transaction bundle',
        description:
          'Probes the chain and builds the transactions `sourceOwner` signs and broadcasts, in order: `keeperFundingTx`, `routeInitTxs`, `orchestratorInitTx`, `sessionInitTxs` (skip null or empty groups). Call it again after a partial broadcast: groups already on chain are dropped and the blockhash is fresh.',
        params: z.object({ transferId: integerId }),
        body: noBody,
        response: { 200: prepareResponseSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const transfer = await loadTransfer(deps.transfers, request.auth.owner, request.params.transferId);
      return prepareTransfer(deps, transfer, (change) =>
        deps.runChange(request, reply, async (tx) => {
          const { transfer, preparedTxs } = await change(tx);
          return { transfer: transferView(transfer), preparedTxs };
        }),
      );
    },
  );
}
