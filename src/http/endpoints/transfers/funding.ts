import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { transferView } from '../../../domain/transfer-view.ts';
import type { TransferStore } from '../../../store/transfers.ts';
import { awaitDeployment, type RefreshDeps, refreshFromChain } from '../../../use-cases/refresh.ts';
import { limit } from '../../rate-limit.ts';
import { errorResponses, integerId, noBody } from '../../schemas/common.ts';
import { transferSchema } from '../../schemas/transfers.ts';
import { loadTransfer } from './get-transfer.ts';

const params = z.object({ transferId: integerId });
const response = { 200: z.object({ transfer: transferSchema }), ...errorResponses };

/**
 * `POST /transfers/{id}/funding/refresh` (the transfer as the chain shows it now) and
 * `POST /transfers/{id}/funding/confirm` (waits for the route to be deployed and funded).
 */
export async function fundingEndpoints(
  app: FastifyInstance,
  deps: RefreshDeps & { transfers: TransferStore; fundingPollMs?: number },
) {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const pollMs = deps.fundingPollMs ?? 1_000;

  routes.post(
    '/transfers/:transferId/funding/refresh',
    {
      config: limit('fundingRefresh'),
      schema: {
        tags: ['Transfers'],
        operationId: 'refreshFunding',
        summary: 'Refresh a transfer from the chain',
        description:
          'Reads the transfer’s route on chain now and updates its phase and status, whatever the phase: a deployment found complete is taken over as a final confirm-broadcast would (or refused, when its terms are not the quoted ones); a route that can no longer run (marked failed on chain, or past its deadline) is recorded `failed` or `recoverable`.',
        params,
        body: noBody,
        response,
      },
    },
    async (request) => {
      const transfer = await loadTransfer(deps.transfers, request.auth.owner, request.params.transferId);
      return { transfer: transferView(await refreshFromChain(deps, transfer)) };
    },
  );

  routes.post(
    '/transfers/:transferId/funding/confirm',
    {
      config: limit('fundingConfirm'),
      schema: {
        tags: ['Transfers'],
        operationId: 'confirmFunding',
        summary: 'Wait for the route to be deployed and funded',
        description:
          'Waits up to `timeoutSeconds` (default 30, 1 to 60) for the route to be deployed and funded on chain and answers the transfer; MH_032 when it was not within that time.',
        params,
        body: z
          .object({ timeoutSeconds: z.int().min(1).max(60).default(30) })
          .strict()
          .nullish()
          .transform((body) => body ?? { timeoutSeconds: 30 }),
        response,
      },
    },
    async (request) => {
      const transfer = await loadTransfer(deps.transfers, request.auth.owner, request.params.transferId);
      const wait = { timeoutSeconds: request.body.timeoutSeconds, pollMs };
      return { transfer: transferView(await awaitDeployment(deps, transfer, wait)) };
    },
  );
}
