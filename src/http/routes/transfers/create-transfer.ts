import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { stringify } from 'safe-stable-stringify';
import { rawToTokens, tokensMatchRaw } from '../../../domain/amounts.ts';
import type { Clock } from '../../../domain/clock.ts';
import { AppError } from '../../../domain/errors.ts';
import { resolveArrivalSeconds } from '../../../domain/fees.ts';
import { quoteView } from '../../../domain/transfer-view.ts';
import type { TransferStore } from '../../../store/transfers.ts';
import { markClaimSettled, openClaim } from '../../idempotency.ts';
import { limit } from '../../rate-limit.ts';
import { errorResponses } from '../../schemas/common.ts';
import { createTransferBody, createTransferFieldErrors, quoteSchema } from '../../schemas/transfers.ts';
import { dependencyDeadline, type PricingDeps, priceRequest } from './pricing.ts';

/** `POST /transfers`: a quote with pricing locked until `expiresAt`. */
export async function createTransferRoute(
  app: FastifyInstance,
  deps: PricingDeps & { transfers: TransferStore; clock: Clock; quoteTtlMs: number },
) {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/transfers',
    {
      config: { ...limit('createTransfer'), fieldErrors: createTransferFieldErrors },
      schema: {
        tags: ['Transfers'],
        summary: 'Create a transfer (a priced quote)',
        description:
          'Creates a transfer in status `quote` with pricing locked until `expiresAt`. Repeating a create with the same `externalId` and the same parameters returns the existing transfer; different parameters are MH_033.',
        body: createTransferBody,
        response: { 200: quoteSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { auth, body } = request;
      const owner = auth.owner;
      const hops = body.hops ?? auth.settings.defaultHops;
      const arrival = resolveArrivalSeconds(hops, body.arrivalSeconds, auth.settings.defaultArrivalSeconds);
      if (!arrival.ok)
        throw new AppError(arrival.error.code, `${arrival.error.message}.`, { param: arrival.error.param });

      // What makes two creates "the same" (decision C6): the parameters after defaults apply.
      const fingerprint = createHash('sha256')
        .update(
          stringify({
            tokenMint: body.tokenMint,
            amountRaw: body.amountRaw.toString(),
            sourceOwner: body.sourceOwner,
            recipientWallet: body.recipientWallet,
            hops,
            arrivalSeconds: arrival.value,
            tokenDecimals: body.tokenDecimals ?? null,
            tokenSymbol: body.tokenSymbol ?? null,
            tokenPriceUsd: body.tokenPriceUsd ?? null,
          }) ?? '',
        )
        .digest();
      const repeated = await deps.transfers.matchExternalId(owner, body.externalId ?? null, fingerprint);
      if (repeated?.kind === 'existing') return quoteView(repeated.transfer);
      if (repeated?.kind === 'conflict') throw duplicate(body.externalId);

      const priced = await priceRequest(deps, auth, { ...body, hops }, dependencyDeadline());
      if (!tokensMatchRaw(body.amountTokens, body.amountRaw, priced.decimals)) {
        throw new AppError(
          'MH_016',
          `amountTokens "${body.amountTokens}" does not equal amountRaw ${body.amountRaw} at ${priced.decimals} decimals (expected "${rawToTokens(body.amountRaw, priced.decimals)}").`,
          { param: 'amountTokens' },
        );
      }
      const { fees } = priced;
      const quotedAt = deps.clock.now();
      const claim = openClaim(request);
      let answered: string | undefined;
      const quote = {
        externalId: body.externalId ?? null,
        fingerprint,
        tokenMint: body.tokenMint,
        tokenSymbol: body.tokenSymbol ?? null,
        tokenDecimals: priced.decimals,
        amountRaw: body.amountRaw,
        amountTokens: rawToTokens(body.amountRaw, priced.decimals),
        sourceOwner: body.sourceOwner,
        recipientWallet: body.recipientWallet,
        hops,
        arrivalSeconds: arrival.value,
        tokenPriceUsd: priced.price.priceUsd,
        priceSource: priced.price.source,
        usdEquivalent: fees.usdEquivalent,
        pricingTier: fees.tier,
        percentFeeBps: fees.percentFeeBps,
        percentFeeRaw: fees.percentFeeRaw,
        integratorPercentShareRaw: fees.integratorPercentShareRaw,
        netDeliveredRaw: fees.netDeliveredRaw,
        flatFeeLamportsPerHop: fees.flatFeeLamportsPerHop,
        totalFlatFeeLamports: fees.totalFlatFeeLamports,
        integratorFlatShareLamports: fees.integratorFlatShareLamports,
        quotedAt,
        expiresAt: new Date(quotedAt.getTime() + deps.quoteTtlMs),
      };
      // The idempotent response is recorded in the quote's own statement: it is exactly the body
      // sent, serialised here once.
      const result = await deps.transfers.createQuote(
        owner,
        quote,
        claim
          ? {
              ...claim,
              now: quotedAt,
              responseFor: (transfer) => {
                const body = String(reply.serialize(quoteView(transfer)));
                answered = body;
                return { status: 200, body };
              },
            }
          : undefined,
      );
      if (result.kind === 'conflict') throw duplicate(body.externalId);
      if (result.kind === 'created' && answered !== undefined) {
        markClaimSettled(request);
        // Already serialised by this route's own serializer; sent as is.
        return reply.type('application/json; charset=utf-8').send(answered as never);
      }
      return quoteView(result.transfer);
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
