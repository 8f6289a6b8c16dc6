import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { BlockhashReader } from '../../../chain/types.ts';
import type { Clock } from '../../../domain/clock.ts';
import { allows } from '../../../domain/lifecycle.ts';
import { assertNotExpired, expiredError, type Transfer } from '../../../domain/transfer.ts';
import { transferView } from '../../../domain/transfer-view.ts';
import type { DeploymentStore } from '../../../store/deployments.ts';
import type { TransferStore } from '../../../store/transfers.ts';
import { type PrepareDeps, type PreparedBundle, prepareBundle } from '../../../use-cases/prepare.ts';
import { dependencyDeadline } from '../../../use-cases/quote.ts';
import type { ChangeRunner } from '../../idempotency.ts';
import { limit } from '../../rate-limit.ts';
import { errorResponses, integerId, noBody } from '../../schemas/common.ts';
import { prepareResponseSchema } from '../../schemas/transfers.ts';
import { notFound } from './get-transfer.ts';

/** The bundle of a transfer whose route is deployed already: every group empty, a fresh blockhash. */
async function nothingToDo(
  chain: BlockhashReader,
  transfer: Transfer,
  signal: AbortSignal,
): Promise<PreparedBundle> {
  const lifetime = await chain.getLatestBlockhash({ signal });
  return {
    keeperFundingTx: null,
    routeInitTxs: [],
    orchestratorInitTx: null,
    sessionInitTxs: [],
    recentBlockhash: lifetime.blockhash,
    lastValidBlockHeight: Number(lifetime.lastValidBlockHeight),
    resume: {
      routeAlreadyDeployed: true,
      existingHopCount: transfer.hops,
      totalHops: transfer.hops,
      orchestratorAlreadyInitialized: true,
      completedStepIndices: Array.from({ length: transfer.hops }, (_, index) => index),
      totalSteps: transfer.hops,
      keeperAlreadyFunded: true,
      nothingToDo: true,
    },
  };
}

/** `POST /transfers/{transferId}/prepare`: the bundle the source signs to deploy the route. */
export async function prepareEndpoint(
  app: FastifyInstance,
  deps: PrepareDeps & {
    transfers: TransferStore;
    deployments: DeploymentStore;
    runChange: ChangeRunner;
    clock: Clock;
  },
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
      const found = await deps.transfers.get(request.auth.owner, request.params.transferId);
      if (!found) throw notFound(`No transfer with id ${request.params.transferId}.`, 'transferId');
      const now = deps.clock.now();
      assertNotExpired(found, now);
      const signal = dependencyDeadline();
      if (!allows('prepared', found.phase)) {
        // Past expiresAt only a route that was taken over has anything left to answer for.
        if (found.depositReceivedAt === null && found.expiresAt.getTime() <= now.getTime()) {
          throw expiredError(found);
        }
        return { transfer: transferView(found), preparedTxs: await nothingToDo(deps.chain, found, signal) };
      }
      const { transfer, bundle, terms } = await prepareBundle(deps, found, { signal });
      return deps.runChange(request, reply, async (tx) => {
        const now = deps.clock.now();
        const prepared = bundle.resume.nothingToDo
          ? transfer
          : await deps.deployments.recordPrepared(tx, transfer.id, {
              keeperFundingInBundle: bundle.keeperFundingTx !== null,
              now,
            });
        // After the transfer's row is updated: the terms' reference to it then takes no lock of its
        // own on the row (one taken before the update costs a multixact, measured: ~6 ms a prepare).
        if (terms) await deps.deployments.recordRouteTerms(tx, transfer.id, terms, now);
        // The expiry worker may have expired the quote while its bundle was built: a bundle handed
        // out now would put a route on chain that nothing watches.
        if (prepared.status === 'expired') assertNotExpired(prepared, deps.clock.now());
        return { transfer: transferView(prepared), preparedTxs: bundle };
      });
    },
  );
}
