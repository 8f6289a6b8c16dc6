import type { Signature } from '@solana/kit';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../../domain/errors.ts';
import { allowsRecovery } from '../../../domain/transfer.ts';
import { lamportsToJson } from '../../../domain/transfer-view.ts';
import type { TransferStore } from '../../../store/transfers.ts';
import { dependencyDeadline } from '../../../use-cases/quote.ts';
import {
  buildRecoveryBundle,
  landedProblem,
  matchBundleSignatures,
  type RoutedTransfer,
  readRecovery,
  recoveryNotAllowed,
} from '../../../use-cases/recovery.ts';
import { limit } from '../../rate-limit.ts';
import { errorResponses, noBody } from '../../schemas/common.ts';
import {
  reclaimBundleSchema,
  reclaimConfirmResponseSchema,
  signatureInput,
} from '../../schemas/transfers.ts';
import { notFound } from './get-transfer.ts';
import { params, type RecoveryEndpointDeps, unique } from './rescue.ts';

/**
 * `POST /transfers/{id}/reclaim-rent/prepare` (the bundle that returns the rent of a route that
 * ended, and the keeper's leftover) and `POST /transfers/{id}/reclaim-rent/confirm` (the result of
 * each reported signature).
 */
export async function reclaimRentEndpoints(app: FastifyInstance, deps: RecoveryEndpointDeps) {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const load = async (owner: Parameters<TransferStore['get']>[0], id: number) => {
    const transfer = await deps.transfers.get(owner, id);
    if (!transfer) throw notFound(`No transfer with id ${id}.`, 'transferId');
    if (!transfer.route || !allowsRecovery('reclaim', transfer.phase)) {
      throw recoveryNotAllowed(transfer, 'reclaim');
    }
    return transfer as RoutedTransfer;
  };

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
      const options = { signal: dependencyDeadline() };
      const transfer = await load(request.auth.owner, request.params.transferId);
      const read = await readRecovery(deps.chain, deps.programAddress, transfer, options);
      if (!read.figures.canReclaimRent) {
        throw new AppError(
          'MH_082',
          `Nothing is left to reclaim: every account of the route of transfer ${transfer.id} is closed and its keeper holds nothing.`,
          { param: 'transferId' },
        );
      }
      const { transactions, lifetime } = await buildRecoveryBundle(deps, transfer, 'reclaim', read, options);
      return deps.runChange(request, reply, async (tx) => {
        await deps.recovery.saveBundle(tx, transfer.id, {
          kind: 'reclaim',
          transactions: transactions.map((transaction) => transaction.base64),
          recovery: read.recovery,
          now: deps.clock.now(),
        });
        return {
          reclaimTxs: transactions,
          recentBlockhash: lifetime.blockhash,
          lastValidBlockHeight: Number(lifetime.lastValidBlockHeight),
          reclaimable: {
            totalLamports: lamportsToJson(read.recovery.reclaimableLamports),
            stepCount: read.figures.reclaimableStepCount,
          },
        };
      });
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
      const options = { signal: dependencyDeadline() };
      const transfer = await load(request.auth.owner, request.params.transferId);
      const signatures = unique(request.body.reclaimSignatures);
      const bundle = await deps.recovery.latestBundle(transfer.id, 'reclaim');
      const matches = bundle
        ? await matchBundleSignatures(transfer.sourceOwner, bundle.transactions, signatures)
        : signatures.map(() => -1);
      const outcomes = await Promise.all(
        signatures.map(async (signature, index): Promise<{ signature: Signature; error: string | null }> => {
          if (matches[index]! < 0) {
            return {
              signature,
              error: bundle
                ? `MH_083: ${signature} is not the source's signature of a transaction of the latest reclaim bundle of transfer ${transfer.id} (prepared at ${bundle.preparedAt.toISOString()}).`
                : `MH_083: no reclaim bundle was prepared for transfer ${transfer.id}.`,
            };
          }
          const problem = await landedProblem(deps.chain, signature, options);
          return { signature, error: problem && `${problem.code}: ${problem.message}` };
        }),
      );
      const confirmed = outcomes.flatMap(({ signature, error }) => (error === null ? [signature] : []));
      const failed = outcomes.flatMap(({ signature, error }) =>
        error === null ? [] : [{ signature, error }],
      );
      if (confirmed.length === 0) return { confirmed, failed };
      const read = await readRecovery(deps.chain, deps.programAddress, transfer, options);
      return deps.runChange(request, reply, async (tx) => {
        await deps.recovery.recordReclaim(tx, transfer.id, {
          signatures: confirmed,
          recovery: read.recovery,
          complete: read.figures.reclaimableLamports === 0n,
          now: deps.clock.now(),
        });
        return { confirmed, failed };
      });
    },
  );
}
