import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { transferView } from '../../../domain/transfer-view.ts';
import type { TransferStore } from '../../../store/transfers.ts';
import { type ConfirmBroadcastDeps, confirmBroadcast } from '../../../use-cases/confirm.ts';
import type { ChangeRunner } from '../../idempotency.ts';
import { limit } from '../../rate-limit.ts';
import { errorResponses, integerId } from '../../schemas/common.ts';
import { signatureInput as signature, transferSchema } from '../../schemas/transfers.ts';
import { loadTransfer } from './get-transfer.ts';

const confirmBody = z
  .object({
    routeInitSignatures: z
      .array(signature)
      .max(8)
      .describe(
        'One per `routeInitTxs` entry broadcast; `[]` on the intermediate call after keeper funding.',
      ),
    keeperFundingSignature: signature
      .optional()
      .describe('Required whenever prepare emitted a `keeperFundingTx` (MH_039), unless reported before.'),
    orchestratorInitSignature: signature.optional().describe('Omit when `orchestratorInitTx` was null.'),
    sessionInitSignatures: z
      .array(signature)
      .max(8)
      .optional()
      .describe('Omit when `sessionInitTxs` was empty.'),
  })
  .strict();

/**
 * `POST /transfers/{transferId}/confirm-broadcast`: records the signatures of a broadcast bundle
 * after verifying each on chain, and hands a route found complete on chain to the keeper network.
 */
export async function confirmBroadcastEndpoint(
  app: FastifyInstance,
  deps: ConfirmBroadcastDeps & { transfers: TransferStore; runChange: ChangeRunner },
) {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/transfers/:transferId/confirm-broadcast',
    {
      config: limit('confirmBroadcast'),
      schema: {
        tags: ['Transfers'],
        operationId: 'confirmBroadcast',
        summary: 'Confirm the broadcast bundle',
        description:
          'Two calls: right after keeper funding, `{ keeperFundingSignature, routeInitSignatures: [] }` (recorded, so a resumed deployment never funds the keeper twice); after every other transaction confirmed, all the signatures. The transfer becomes `processing` once the route, the orchestrator config and every step state exist on chain and the keeper holds its funding; before that it is answered unchanged.',
        params: z.object({ transferId: integerId }),
        body: confirmBody,
        response: { 200: z.object({ transfer: transferSchema }), ...errorResponses },
      },
    },
    async (request, reply) => {
      const transfer = await loadTransfer(deps.transfers, request.auth.owner, request.params.transferId);
      return confirmBroadcast(deps, transfer, request.body, (change) =>
        deps.runChange(request, reply, async (tx) => ({ transfer: transferView(await change(tx)) })),
      );
    },
  );
}
