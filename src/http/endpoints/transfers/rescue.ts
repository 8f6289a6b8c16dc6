import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { lamportsToJson, transferView } from '../../../domain/transfer-view.ts';
import type { RecoveryDeps } from '../../../use-cases/recovery-bundle.ts';
import { confirmRescue, prepareRescue } from '../../../use-cases/rescue.ts';
import type { ChangeRunner } from '../../idempotency.ts';
import { limit } from '../../rate-limit.ts';
import { errorResponses, integerId, noBody } from '../../schemas/common.ts';
import { rescueBundleSchema, signatureInput, transferSchema } from '../../schemas/transfers.ts';
import { loadTransfer } from './get-transfer.ts';

export type RecoveryEndpointDeps = RecoveryDeps & { runChange: ChangeRunner };

/** The path parameter of the recovery endpoints. */
export const params = z.object({ transferId: integerId });

/**
 * `POST /transfers/{id}/rescue/prepare` (the bundle that gives the source everything back) and
 * `POST /transfers/{id}/rescue/confirm` (its signatures, checked against that bundle and the chain).
 */
export async function rescueEndpoints(app: FastifyInstance, deps: RecoveryEndpointDeps) {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post(
    '/transfers/:transferId/rescue/prepare',
    {
      config: limit('rescuePrepare'),
      schema: {
        tags: ['Recovery'],
        operationId: 'prepareRescue',
        summary: 'Prepare the rescue bundle',
        description:
          'Reads the route on chain and builds the transactions that return to `sourceOwner` everything its route holds: the tokens, the flat fee, a screening deposit not forfeited, the rent of every route account and the keeper’s leftover. Allowed in phases `failed` and `recoverable`, and on an `executing` route past its deadline (recorded `recoverable` first). The source’s wallet signs each transaction (it is the fee payer; the keeper’s sweep is signed already) and broadcasts them in order. After a partial broadcast, prepare again: the new bundle covers what is left and replaces this one.',
        params,
        body: noBody,
        response: { 200: rescueBundleSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const transfer = await loadTransfer(deps.transfers, request.auth.owner, request.params.transferId);
      return prepareRescue(deps, transfer, (change) =>
        deps.runChange(request, reply, async (tx) => {
          const { transactions, lifetime, read } = await change(tx);
          return {
            rescueTxs: transactions,
            recentBlockhash: lifetime.blockhash,
            lastValidBlockHeight: Number(lifetime.lastValidBlockHeight),
            rescuable: {
              totalLamports: lamportsToJson(read.recovery.rescuableLamports),
              accounts: read.recovery.rescuableAccounts.map(({ kind, lamports }) => ({
                kind,
                lamports: lamportsToJson(lamports),
              })),
            },
          };
        }),
      );
    },
  );

  routes.post(
    '/transfers/:transferId/rescue/confirm',
    {
      config: limit('rescueConfirm'),
      schema: {
        tags: ['Recovery'],
        operationId: 'confirmRescue',
        summary: 'Confirm a broadcast rescue',
        description:
          'Reports the signatures of broadcast rescue transactions. Each must be the source’s signature of a transaction of the latest rescue bundle of this transfer (`MH_083` otherwise, e.g. for another transfer’s or an earlier bundle’s) that landed (`MH_036`) and succeeded (`MH_037`). Once the route is closed on chain the transfer becomes phase `rescued`, status `refunded` (events `rescued`, `refunded`, `phase_changed`); before that it answers the transfer with its `recovery` figures updated.',
        params,
        body: z
          .object({
            rescueSignatures: z
              .array(signatureInput)
              .min(1)
              .max(8)
              .describe('The signatures of the broadcast `rescueTxs`, at least one.'),
          })
          .strict(),
        response: { 200: z.object({ transfer: transferSchema }), ...errorResponses },
      },
    },
    async (request, reply) => {
      const transfer = await loadTransfer(deps.transfers, request.auth.owner, request.params.transferId);
      return confirmRescue(deps, transfer, request.body.rescueSignatures, (change) =>
        deps.runChange(request, reply, async (tx) => ({ transfer: transferView(await change(tx)) })),
      );
    },
  );
}
