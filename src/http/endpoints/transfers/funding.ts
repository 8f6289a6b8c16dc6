import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../../domain/errors.ts';
import type { Transfer } from '../../../domain/transfer.ts';
import { transferView } from '../../../domain/transfer-view.ts';
import type { TransferStore } from '../../../store/transfers.ts';
import type { OverdueDeps } from '../../../use-cases/overdue.ts';
import { type ReconcileDeps, reconcileDeployment } from '../../../use-cases/reconcile.ts';
import { refreshFromChain } from '../../../use-cases/refresh.ts';
import { limit } from '../../rate-limit.ts';
import { errorResponses, integerId, noBody } from '../../schemas/common.ts';
import { transferSchema } from '../../schemas/transfers.ts';
import { notFound } from './get-transfer.ts';

const params = z.object({ transferId: integerId });
const response = { 200: z.object({ transfer: transferSchema }), ...errorResponses };

/** Statuses a transfer reaches once its deployment is over, one way or another. */
const settledDeployment = (transfer: Transfer) =>
  transfer.status !== 'quote' && transfer.status !== 'awaiting_signature';

/**
 * `POST /transfers/{id}/funding/refresh` (the transfer as the chain shows it now) and
 * `POST /transfers/{id}/funding/confirm` (waits for the route to be deployed and funded).
 */
export async function fundingEndpoints(
  app: FastifyInstance,
  deps: ReconcileDeps & OverdueDeps & { transfers: TransferStore; fundingPollMs?: number },
) {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const pollMs = deps.fundingPollMs ?? 1_000;
  const load = async (owner: Parameters<TransferStore['get']>[0], id: number) => {
    const transfer = await deps.transfers.get(owner, id);
    if (!transfer) throw notFound(`No transfer with id ${id}.`, 'transferId');
    return transfer;
  };

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
      const { owner } = request.auth;
      const transfer = await load(owner, request.params.transferId);
      const refreshed = await refreshFromChain(deps, transfer, () => load(owner, transfer.id));
      return { transfer: transferView(refreshed) };
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
      const deadline = Date.now() + request.body.timeoutSeconds * 1000;
      let transfer = await load(request.auth.owner, request.params.transferId);
      if (transfer.status === 'quote') {
        throw new AppError(
          'MH_035',
          `Transfer ${transfer.id} has no prepared bundle yet: call prepare first.`,
          {
            param: 'transferId',
          },
        );
      }
      // Between looks at the chain nothing is held: no database connection, no lock.
      for (;;) {
        transfer = await reconcileDeployment(deps, transfer);
        if (settledDeployment(transfer)) return { transfer: transferView(transfer) };
        const left = deadline - Date.now();
        if (left <= 0) break;
        await sleep(Math.min(pollMs, left));
        transfer = await load(request.auth.owner, transfer.id);
      }
      throw new AppError(
        'MH_032',
        `The route of transfer ${transfer.id} was not deployed and funded within ${request.body.timeoutSeconds} s. Broadcast the prepared bundle, then call again.`,
        { param: 'timeoutSeconds' },
      );
    },
  );
}
