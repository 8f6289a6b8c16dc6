import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Clock } from '../../../domain/clock.ts';
import { AppError } from '../../../domain/errors.ts';
import {
  assertNotExpired,
  isExpiredQuote,
  type RouteRecord,
  type Transfer,
} from '../../../domain/transfer.ts';
import { transferView } from '../../../domain/transfer-view.ts';
import type { DeploymentStore } from '../../../store/deployments.ts';
import type { TransferStore } from '../../../store/transfers.ts';
import {
  type BroadcastReport,
  type ConfirmDeps,
  deploymentState,
  verifyDeployment,
  verifyKeeperFunding,
} from '../../../use-cases/confirm.ts';
import { dependencyDeadline } from '../../../use-cases/quote.ts';
import { readRoute } from '../../../use-cases/route-reads.ts';
import { type KeeperRefundDeps, refuseUnquotedRoute } from '../../../use-cases/unquoted.ts';
import type { ChangeRunner } from '../../idempotency.ts';
import { limit } from '../../rate-limit.ts';
import { errorResponses, integerId } from '../../schemas/common.ts';
import { signatureInput as signature, transferSchema } from '../../schemas/transfers.ts';
import { notFound } from './get-transfer.ts';

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

/** MH_035: the transfer is not in a state that allows broadcast confirmation. */
function notConfirmable(transfer: Transfer) {
  return new AppError(
    'MH_035',
    transfer.status === 'quote'
      ? `Transfer ${transfer.id} has no prepared bundle yet: call prepare first.`
      : `Transfer ${transfer.id} is ${transfer.status}: there is no broadcast left to confirm.`,
    { param: 'transferId' },
  );
}

/**
 * `POST /transfers/{transferId}/confirm-broadcast`: records the signatures of a broadcast bundle
 * after verifying each on chain, and hands a route found complete on chain to the keeper network.
 */
export async function confirmBroadcastEndpoint(
  app: FastifyInstance,
  deps: ConfirmDeps &
    KeeperRefundDeps & {
      transfers: TransferStore;
      deployments: DeploymentStore;
      runChange: ChangeRunner;
      clock: Clock;
    },
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
      const found = await deps.transfers.get(request.auth.owner, request.params.transferId);
      if (!found) throw notFound(`No transfer with id ${request.params.transferId}.`, 'transferId');
      // A quote past expiresAt is expired even before the expiry worker marks it; a prepared
      // transfer past it may still have its complete route taken over (below).
      if (found.status !== 'awaiting_signature') assertNotExpired(found, deps.clock.now());
      if ((found.status !== 'awaiting_signature' && found.status !== 'processing') || !found.route) {
        throw notConfirmable(found);
      }
      const transfer = found as Transfer & { route: RouteRecord };
      const report: BroadcastReport = request.body;
      const options = { signal: dependencyDeadline() };
      const now = () => deps.clock.now();

      if (report.keeperFundingSignature) {
        await verifyKeeperFunding(deps, transfer, report.keeperFundingSignature, options);
      }
      const fundingKnown = report.keeperFundingSignature ?? transfer.route.keeperFundingSignature;
      if (transfer.route.keeperFundingInBundle && !fundingKnown) {
        throw new AppError(
          'MH_039',
          'The prepared bundle funds the keeper: send keeperFundingSignature, the signature of its keeperFundingTx (once recorded, it need not be sent again).',
          { param: 'keeperFundingSignature' },
        );
      }
      await verifyDeployment(deps, transfer, report, options);
      // A route taken over already (by an earlier confirm or the reconciler) only gains the
      // signatures it lacked: its keeper may have spent on hops since, so it is not looked at again.
      const state =
        transfer.status === 'processing'
          ? null
          : deploymentState(
              await readRoute(deps.chain, deps.programAddress, transfer, options),
              transfer,
              await deps.deployments.preparedRouteTerms(transfer.id),
            );
      // A route with terms nobody quoted is never run: the keeper's lamports go back to the source
      // and the transfer becomes recoverable, expired quote or not.
      const refused =
        state?.kind === 'unquoted' ? await refuseUnquotedRoute(deps, transfer, state.difference) : null;
      if (state !== null && state.kind !== 'complete' && !refused && isExpiredQuote(transfer, now())) {
        throw new AppError(
          'MH_034',
          `Transfer ${transfer.id} expired at ${transfer.expiresAt.toISOString()} before its route was deployed.`,
          { param: 'transferId' },
        );
      }

      const signatures = {
        routeInit: report.routeInitSignatures,
        sessionInit: report.sessionInitSignatures ?? [],
        orchestrator: report.orchestratorInitSignature ?? null,
      };
      return deps.runChange(request, reply, async (tx) => {
        let current = transfer as Transfer;
        if (report.keeperFundingSignature) {
          current = await deps.deployments.recordKeeperFunding(
            tx,
            transfer.id,
            report.keeperFundingSignature,
            now(),
          );
        }
        if (state === null) {
          current = await deps.deployments.addSignatures(tx, transfer.id, signatures, now());
        } else if (state.kind === 'complete') {
          current =
            (await deps.deployments.takeOver(tx, transfer.id, {
              signatures,
              schedule: state.schedule,
              keeperDueAt: state.keeperDueAt,
              now: now(),
            })) ?? (await deps.deployments.addSignatures(tx, transfer.id, signatures, now()));
        } else if (refused) {
          current = await deps.transfers.markRecoverable(tx, transfer.id, { ...refused, now: now() });
        } else if (state.kind === 'partial') {
          current = await deps.deployments.recordDeploying(tx, transfer.id, now());
        }
        return { transfer: transferView(current) };
      });
    },
  );
}
