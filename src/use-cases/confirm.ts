import type { Address, Signature } from '@solana/kit';
import { findOrchestratorPda } from '../chain/router/pda.ts';
import type { RouteSnapshot } from '../chain/router/recovery.ts';
import type { AccountReader, CallOptions, ChainTransaction, TransactionReader } from '../chain/types.ts';
import { AppError } from '../domain/errors.ts';
import type { RouteSchedule } from '../domain/route.ts';
import { type PreparedRouteTerms, type TermDifference, unquotedTerm } from '../domain/route-terms.ts';
import type { RouteRecord, Transfer } from '../domain/transfer.ts';
import { landedTransaction } from './signatures.ts';

/** The signatures a source reports after broadcasting (confirm-broadcast's body). */
export interface BroadcastReport {
  routeInitSignatures: readonly Signature[];
  keeperFundingSignature?: Signature | undefined;
  orchestratorInitSignature?: Signature | undefined;
  sessionInitSignatures?: readonly Signature[] | undefined;
}

export interface ConfirmDeps {
  chain: TransactionReader & AccountReader;
  programAddress: Address;
}

/** What the chain says of a transfer's route after the reported signatures were verified. */
export type DeploymentState =
  | { kind: 'absent' }
  /** A route whose terms are none the service prepared: it is never run. */
  | { kind: 'unquoted'; difference: TermDifference }
  | { kind: 'partial' }
  | {
      kind: 'complete';
      schedule: RouteSchedule;
      /** When the keeper first has work (chain seconds): at once if the route awaits screening, else the first hop. */
      keeperDueAt: bigint;
    };

/**
 * Whether the route is deployed: its terms those of one of the transfer's prepares (`prepared`),
 * the route account active (or beyond), every step state and the source's orchestrator config on
 * chain, and the keeper funded (it pays every hop). The keeper network takes over only a complete
 * route the service verified term by term; a route with other terms is `unquoted` from the moment
 * it exists.
 */
export function deploymentState(
  snapshot: RouteSnapshot,
  transfer: Pick<Transfer, 'hops'> & { route: Pick<RouteRecord, 'keeperFundingLamports'> },
  prepared: readonly PreparedRouteTerms[],
): DeploymentState {
  const route = snapshot.route?.data;
  if (!route) return { kind: 'absent' };
  const difference = unquotedTerm(prepared, route);
  if (difference) return { kind: 'unquoted', difference };
  const complete =
    route.status !== 'deploying' &&
    snapshot.orchestrator !== null &&
    snapshot.steps.length === transfer.hops &&
    snapshot.keeper.lamports >= transfer.route.keeperFundingLamports;
  if (!complete) return { kind: 'partial' };
  return {
    kind: 'complete',
    schedule: {
      firstReleaseAt: route.firstReleaseAt,
      intervalSecs: Number(route.intervalSecs),
      deadlineAt: route.deadlineAt,
    },
    keeperDueAt: route.screening === 'pending' ? 0n : route.firstReleaseAt,
  };
}

/** A landed, successful transaction, or MH_036 (not found) / MH_037 (failed) naming the field. */
async function landed(
  deps: ConfirmDeps,
  signature: Signature,
  param: string,
  options: CallOptions,
): Promise<ChainTransaction> {
  const { transaction, problem } = await landedTransaction(deps.chain, signature, options);
  if (problem) throw new AppError(problem.code, problem.message, { param });
  return transaction;
}

const notOurs = (signature: Signature, param: string, what: string) =>
  new AppError('MH_038', `Transaction ${signature} did not ${what}.`, { param });

/**
 * Verifies the keeper funding a source reports: landed, succeeded, and moved exactly the agreed
 * lamports from the source to this transfer's keeper (MH_036, MH_037, MH_038).
 */
export async function verifyKeeperFunding(
  deps: ConfirmDeps,
  transfer: Transfer & { route: RouteRecord },
  signature: Signature,
  options: CallOptions = {},
): Promise<void> {
  const param = 'keeperFundingSignature';
  const transaction = await landed(deps, signature, param, options);
  const keys = transaction.accountKeys;
  const keeper = keys.indexOf(transfer.route.keeper);
  const received = keeper < 0 ? 0n : transaction.postBalances[keeper]! - transaction.preBalances[keeper]!;
  if (keys[0] !== transfer.sourceOwner || received !== transfer.route.keeperFundingLamports) {
    throw notOurs(
      signature,
      param,
      `move the agreed ${transfer.route.keeperFundingLamports} lamports from the source to this transfer's keeper`,
    );
  }
}

/**
 * Verifies the deployment signatures a source reports: each landed, succeeded, invoked the router
 * program and touched this transfer's route (or, for the orchestrator config, the source's).
 */
export async function verifyDeployment(
  deps: ConfirmDeps,
  transfer: Transfer & { route: RouteRecord },
  report: BroadcastReport,
  options: CallOptions = {},
): Promise<void> {
  const [orchestrator] = await findOrchestratorPda(transfer.sourceOwner, deps.programAddress);
  const checks = [
    ...report.routeInitSignatures.map((signature, index) => ({
      signature,
      param: `routeInitSignatures[${index}]`,
      account: transfer.route.address,
    })),
    ...(report.orchestratorInitSignature
      ? [
          {
            signature: report.orchestratorInitSignature,
            param: 'orchestratorInitSignature',
            account: orchestrator,
          },
        ]
      : []),
    ...(report.sessionInitSignatures ?? []).map((signature, index) => ({
      signature,
      param: `sessionInitSignatures[${index}]`,
      account: transfer.route.address,
    })),
  ];
  await Promise.all(
    checks.map(async ({ signature, param, account }) => {
      const transaction = await landed(deps, signature, param, options);
      if (!transaction.invokedPrograms.includes(deps.programAddress)) {
        throw notOurs(signature, param, "invoke the service's router program");
      }
      if (!transaction.accountKeys.includes(account)) {
        throw notOurs(signature, param, `deploy this transfer's route (it does not touch ${account})`);
      }
    }),
  );
}
