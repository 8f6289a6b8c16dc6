import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Clock } from '../../../domain/clock.ts';
import { AppError, issueError } from '../../../domain/errors.ts';
import { buildQuote, resolveCreateTerms } from '../../../domain/quote.ts';
import { quoteView } from '../../../domain/transfer-view.ts';
import type { TransferStore } from '../../../store/transfers.ts';
import { dependencyDeadline, type PricingDeps, priceRequest } from '../../../use-cases/quote.ts';
import type { ChangeRunner } from '../../idempotency.ts';
import { limit } from '../../rate-limit.ts';
import { errorResponses } from '../../schemas/common.ts';
import { createTransferBody, createTransferFieldErrors, quoteSchema } from '../../schemas/transfers.ts';

/** `POST /transfers`: a quote with pricing locked until `expiresAt`. */
export async function createTransferEndpoint(
  app: FastifyInstance,
  deps: PricingDeps & { transfers: TransferStore; runChange: ChangeRunner; clock: Clock; quoteTtlMs: number },
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
    async (request, reply) => {
      const { owner, settings } = request.auth;
      const terms = resolveCreateTerms(request.body, settings);
      if (!terms.ok) throw issueError(terms.error);
      const { externalId } = request.body;

      // A repeated create is answered before pricing it again, which could fail or differ.
      const repeated = await deps.transfers.matchExternalId(
        owner,
        externalId ?? null,
        terms.value.fingerprint,
      );
      if (repeated?.kind === 'existing') return quoteView(repeated.transfer);
      if (repeated?.kind === 'conflict') throw duplicate(externalId);

      const priced = await priceRequest(
        deps,
        settings,
        { ...request.body, hops: terms.value.hops },
        dependencyDeadline(),
      );
      const quote = buildQuote({
        terms: terms.value,
        decimals: priced.decimals,
        price: priced.price,
        fees: priced.fees,
        quotedAt: deps.clock.now(),
        ttlMs: deps.quoteTtlMs,
      });
      if (!quote.ok) throw issueError(quote.error);

      return deps.runChange(request, reply, async (tx) => {
        const result = await deps.transfers.insertQuote(tx, owner, quote.value);
        if (result.kind === 'conflict') throw duplicate(externalId);
        return quoteView(result.transfer);
      });
    },
  );
}

function duplicate(externalId: string | undefined) {
  return new AppError(
    'MH_033',
    `A transfer with externalId "${externalId}" already exists with different parameters. Use a new externalId or repeat the original request exactly.`,
    { param: 'externalId' },
  );
}
