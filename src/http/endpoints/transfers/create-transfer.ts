import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { quoteView } from '../../../domain/transfer-view.ts';
import { type CreateQuoteDeps, createQuote } from '../../../use-cases/quote.ts';
import type { ChangeRunner } from '../../idempotency.ts';
import { limit } from '../../rate-limit.ts';
import { errorResponses } from '../../schemas/common.ts';
import { createTransferBody, createTransferFieldErrors, quoteSchema } from '../../schemas/transfers.ts';

/** `POST /transfers`: a quote with pricing locked until `expiresAt`. */
export async function createTransferEndpoint(
  app: FastifyInstance,
  deps: CreateQuoteDeps & { runChange: ChangeRunner },
) {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/transfers',
    {
      config: { ...limit('createTransfer'), fieldErrors: createTransferFieldErrors },
      schema: {
        tags: ['Transfers'],
        operationId: 'createTransfer',
        summary: 'Create a transfer (a priced quote)',
        description:
          'Creates a transfer in status `quote` with pricing locked until `expiresAt`. Repeating a create with the same `externalId` and the same parameters returns the existing transfer; different parameters are MH_033.',
        body: createTransferBody,
        response: { 200: quoteSchema, ...errorResponses },
      },
    },
    async (request, reply) =>
      createQuote(deps, request.auth, request.body, (change) =>
        deps.runChange(request, reply, async (tx) => quoteView(await change(tx))),
      ),
  );
}
