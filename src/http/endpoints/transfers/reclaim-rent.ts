import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { lamportsToJson } from '../../../domain/transfer-view.ts';
import { confirmReclaim, prepareReclaim } from '../../../use-cases/reclaim.ts';
import { limit } from '../../rate-limit.ts';
import { errorResponses, noBody } from '../../schemas/common.ts';
import {
  reclaimBundleSchema,
  reclaimConfirmResponseSchema,
  signatureInput,
} from '../../schemas/transfers.ts';
import { loadTransfer } from './get-transfer.ts';
import { params, type RecoveryEndpointDeps } from './rescue.ts';

/**
 * `POST /transfers/{id}/reclaim-rent/prepare` (the bundle that returns the rent of a route that
 * ended, and the keeper's leftover) and `POST /transfers/{id}/reclaim-rent/confirm` (the result of
 * each reported signature).
 */
export async function reclaimRentEndpoints(app: FastifyInstance, deps: RecoveryEndpointDeps) {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  routes.post(
    '/transfers/:transferId/reclaim-rent/prepare',
    {
      config: limit('reclaimPrepare'),
      schema: {
        tags: ['Recovery'],
        operationId: 'prepareRentReclaim',
        summary: 'Prepare the rent reclaim bundle',
        description:
          'Reads the route on chain and builds the transactions that close every account the route still has and return their rent to `sourceOwner`, with the keeper’s leftover lamports (and the source’s orchestrator config when no other route of it is open). Allowed once the route settled (phases `settled`, `reclaimed`, and `rescued` for what reached the route since its rescue). The source’s wallet signs each transaction (it is the fee payer; the keeper’s sweep is signed already) and broadcasts them in order; prepare again after a partial broadcast.',
        params,
        body: noBody,
        response: { 200: reclaimBundleSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const transfer = await loadTransfer(deps.transfers, request.auth.owner, request.params.transferId);
      return prepareReclaim(deps, transfer, (change) =>
        deps.runChange(request, reply, async (tx) => {
          const { transactions, lifetime, read } = await change(tx);
          return {
            reclaimTxs: transactions,
            recentBlockhash: lifetime.blockhash,
            lastValidBlockHeight: Number(lifetime.lastValidBlockHeight),
            reclaimable: {
              totalLamports: lamportsToJson(read.recovery.reclaimableLamports),
              stepCount: read.figures.reclaimableStepCount,
            },
          };
        }),
      );
    },
  );

  routes.post(
    '/transfers/:transferId/reclaim-rent/confirm',
    {
      config: limit('reclaimConfirm'),
      schema: {
        tags: ['Recovery'],
        operationId: 'confirmRentReclaim',
        summary: 'Confirm a broadcast rent reclaim',
        description:
          'Reports the signatures of broadcast reclaim transactions and answers, for each, whether it counts: `confirmed` when it is the source’s signature of a transaction of the latest reclaim bundle of this transfer that landed and succeeded; otherwise in `failed` with why (`MH_083`: not a transaction of that bundle; `MH_036`: not on chain; `MH_037`: failed on chain). Once nothing is left to reclaim on chain, event `rent_reclaimed`, and a settled transfer becomes phase `reclaimed`.',
        params,
        body: z
          .object({
            reclaimSignatures: z
              .array(signatureInput)
              .min(1)
              .max(8)
              .describe('The signatures of the broadcast `reclaimTxs`, at least one.'),
          })
          .strict(),
        response: { 200: reclaimConfirmResponseSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const transfer = await loadTransfer(deps.transfers, request.auth.owner, request.params.transferId);
      return confirmReclaim(deps, transfer, request.body.reclaimSignatures, (change) =>
        deps.runChange(request, reply, change),
      );
    },
  );
}
