import type { Signature } from '@solana/kit';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { TransactionReader } from '../../../chain/types.ts';
import type { Clock } from '../../../domain/clock.ts';
import { AppError } from '../../../domain/errors.ts';
import { allowsRecovery, type Transfer } from '../../../domain/transfer.ts';
import { lamportsToJson, transferView } from '../../../domain/transfer-view.ts';
import type { Db } from '../../../store/db.ts';
import type { RecoveryStore } from '../../../store/recovery.ts';
import type { TransferStore } from '../../../store/transfers.ts';
import { type OverdueDeps, settleOverdueRoute } from '../../../use-cases/overdue.ts';
import { dependencyDeadline } from '../../../use-cases/quote.ts';
import {
  buildRecoveryBundle,
  landedProblem,
  matchBundleSignatures,
  type RecoveryBundleDeps,
  type RoutedTransfer,
  readRecovery,
  recoveryNotAllowed,
} from '../../../use-cases/recovery.ts';
import type { ChangeRunner } from '../../idempotency.ts';
import { limit } from '../../rate-limit.ts';
import { errorResponses, integerId, noBody } from '../../schemas/common.ts';
import { rescueBundleSchema, signatureInput, transferSchema } from '../../schemas/transfers.ts';
import { notFound } from './get-transfer.ts';

export type RecoveryEndpointDeps = RecoveryBundleDeps &
  OverdueDeps & {
    chain: RecoveryBundleDeps['chain'] & OverdueDeps['chain'] & TransactionReader;
    db: Pick<Db, 'transaction'>;
    transfers: TransferStore;
    recovery: RecoveryStore;
    runChange: ChangeRunner;
    clock: Clock;
  };

/** The path parameter of the recovery endpoints. */
export const params = z.object({ transferId: integerId });

/** Unique signatures in the order given: a signature reported twice counts once. */
export const unique = (signatures: readonly Signature[]) => [...new Set(signatures)];

/**
 * `POST /transfers/{id}/rescue/prepare` (the bundle that gives the source everything back) and
 * `POST /transfers/{id}/rescue/confirm` (its signatures, checked against that bundle and the chain).
 */
export async function rescueEndpoints(app: FastifyInstance, deps: RecoveryEndpointDeps) {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const load = async (owner: Parameters<TransferStore['get']>[0], id: number) => {
    const transfer = await deps.transfers.get(owner, id);
    if (!transfer) throw notFound(`No transfer with id ${id}.`, 'transferId');
    return transfer;
  };

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
      const options = { signal: dependencyDeadline() };
      let transfer = await load(request.auth.owner, request.params.transferId);
      const overdueCandidate = transfer.status === 'processing';
      if (!transfer.route || !(allowsRecovery('rescue', transfer.phase) || overdueCandidate)) {
        throw recoveryNotAllowed(transfer, 'rescue');
      }
      const read = await readRecovery(deps.chain, deps.programAddress, transfer as RoutedTransfer, options);
      if (overdueCandidate) {
        transfer =
          (await settleOverdueRoute(deps, transfer as RoutedTransfer, read)) ??
          (await load(request.auth.owner, transfer.id));
        if (!allowsRecovery('rescue', transfer.phase)) throw recoveryNotAllowed(transfer, 'rescue');
      }
      const routed = transfer as RoutedTransfer;
      if (!read.figures.canRescue) {
        // The route is gone from the chain: it was rescued, by transactions never reported here.
        if (read.snapshot.route === null) {
          await deps.db.transaction((tx) =>
            deps.recovery.recordRescue(tx, routed.id, {
              signatures: [],
              recovery: read.recovery,
              complete: true,
              now: deps.clock.now(),
            }),
          );
        }
        const keeperLeft = read.snapshot.keeper.lamports;
        throw new AppError(
          'MH_081',
          keeperLeft > 0n
            ? `Nothing is left to rescue: the route of transfer ${routed.id} is closed on chain. Its keeper's ${keeperLeft} lamports come back with reclaim-rent.`
            : `Nothing is left to rescue: the route of transfer ${routed.id} is closed on chain and its keeper holds nothing.`,
          { param: 'transferId' },
        );
      }
      const { transactions, lifetime } = await buildRecoveryBundle(deps, routed, 'rescue', read, options);
      return deps.runChange(request, reply, async (tx) => {
        await deps.recovery.saveBundle(tx, routed.id, {
          kind: 'rescue',
          transactions: transactions.map((transaction) => transaction.base64),
          recovery: read.recovery,
          now: deps.clock.now(),
        });
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
      });
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
      const options = { signal: dependencyDeadline() };
      const transfer = await load(request.auth.owner, request.params.transferId);
      if (!transfer.route || !(allowsRecovery('rescue', transfer.phase) || transfer.phase === 'rescued')) {
        throw recoveryNotAllowed(transfer, 'rescue');
      }
      const routed = transfer as RoutedTransfer;
      const signatures = unique(request.body.rescueSignatures);
      const bundle = await deps.recovery.latestBundle(routed.id, 'rescue');
      if (!bundle) {
        throw new AppError(
          'MH_083',
          `No rescue bundle was prepared for transfer ${routed.id}: call rescue/prepare, broadcast its transactions, then report their signatures.`,
          { param: 'rescueSignatures' },
        );
      }
      const matches = await matchBundleSignatures(routed.sourceOwner, bundle.transactions, signatures);
      const stray = matches.indexOf(-1);
      if (stray >= 0) {
        throw new AppError(
          'MH_083',
          `${signatures[stray]} is not the source's signature of a transaction of the latest rescue bundle of transfer ${routed.id} (prepared at ${bundle.preparedAt.toISOString()}). Report the signatures of that bundle: preparing again replaces the earlier bundle.`,
          { param: `rescueSignatures[${request.body.rescueSignatures.indexOf(signatures[stray]!)}]` },
        );
      }
      const problems = await Promise.all(
        signatures.map((signature) => landedProblem(deps.chain, signature, options)),
      );
      const failed = problems.findIndex((problem) => problem !== null);
      if (failed >= 0) {
        const problem = problems[failed]!;
        throw new AppError(problem.code, problem.message, {
          param: `rescueSignatures[${request.body.rescueSignatures.indexOf(signatures[failed]!)}]`,
        });
      }
      const read = await readRecovery(deps.chain, deps.programAddress, routed, options);
      return deps.runChange(request, reply, async (tx) => {
        const current: Transfer = await deps.recovery.recordRescue(tx, routed.id, {
          signatures,
          recovery: read.recovery,
          complete: read.snapshot.route === null,
          now: deps.clock.now(),
        });
        return { transfer: transferView(current) };
      });
    },
  );
}
