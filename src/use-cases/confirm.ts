import type { Address, Signature } from '@solana/kit';
import { findOrchestratorPda } from '../chain/router/pda.ts';
import type { RouteSnapshot } from '../chain/router/recovery.ts';
import type { AccountReader, CallOptions, ChainTransaction } from '../chain/types.ts';
import type { Clock } from '../domain/clock.ts';
import { AppError } from '../domain/errors.ts';
import type { RouteSchedule } from '../domain/route.ts';
import { type PreparedRouteTerms, type TermDifference, unquotedTerm } from '../domain/route-terms.ts';
import { assertNotExpired, isExpiredQuote, type RouteRecord, type Transfer } from '../domain/transfer.ts';
import type { Sql } from '../store/db.ts';
import type { DeploymentStore } from '../store/deployments.ts';
import type { TransferStore } from '../store/transfers.ts';
import type { VerifiedSignatures } from '../store/transitions.ts';
import type { Commit } from './commit.ts';
import { dependencyDeadline } from './deadline.ts';
import { readRoute } from './route-reads.ts';
import { landedTransaction, type SignatureLookup } from './signatures.ts';
import { type KeeperRefundDeps, refuseUnquotedRoute } from './unquoted.ts';

/** The signatures a source reports after broadcasting (confirm-broadcast's body). */
export interface BroadcastReport {
  routeInitSignatures: readonly Signature[];
  keeperFundingSignature?: Signature | undefined;
  orchestratorInitSignature?: Signature | undefined;
  sessionInitSignatures?: readonly Signature[] | undefined;
}

export interface ConfirmDeps {
  chain: SignatureLookup & AccountReader;
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
async function verifyKeeperFunding(
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
async function verifyDeployment(
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

export type ConfirmBroadcastDeps = ConfirmDeps &
  KeeperRefundDeps & {
    deployments: DeploymentStore;
    transfers: Pick<TransferStore, 'markRecoverable'>;
    clock: Clock;
  };

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
 * Records the signatures of a broadcast bundle after verifying each on chain, and hands a route
 * found complete on chain, with the quoted terms, to the keeper. A route with terms nobody quoted
 * is refused at once; a quote past `expiresAt` whose route is not complete is MH_034.
 */
export async function confirmBroadcast<R>(
  deps: ConfirmBroadcastDeps,
  found: Transfer,
  report: BroadcastReport,
  commit: Commit<Transfer, R>,
): Promise<R> {
  // A quote past expiresAt is expired even before the expiry worker marks it; a prepared
  // transfer past it may still have its complete route taken over (below).
  if (found.status !== 'awaiting_signature') assertNotExpired(found, deps.clock.now());
  if ((found.status !== 'awaiting_signature' && found.status !== 'processing') || !found.route) {
    throw notConfirmable(found);
  }
  const transfer = found as Transfer & { route: RouteRecord };
  const options = { signal: dependencyDeadline() };
  await verifyReport(deps, transfer, report, options);
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
  if (state !== null && state.kind !== 'complete' && !refused && isExpiredQuote(transfer, deps.clock.now())) {
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
  return commit(async (tx) => {
    const now = deps.clock.now();
    let current: Transfer = transfer;
    if (report.keeperFundingSignature) {
      current = await deps.deployments.recordKeeperFunding(
        tx,
        transfer.id,
        report.keeperFundingSignature,
        now,
      );
    }
    if (state === null) return deps.deployments.addSignatures(tx, transfer.id, signatures, now);
    if (state.kind === 'complete')
      return takeOver(deps.deployments, tx, transfer.id, { state, signatures, now });
    if (refused) return deps.transfers.markRecoverable(tx, transfer.id, { ...refused, now });
    if (state.kind === 'partial') return deps.deployments.recordDeploying(tx, transfer.id, now);
    return current;
  });
}

/**
 * Verifies what a source reports: the keeper's funding when it sends it (required while the
 * bundle funds the keeper and none was recorded, MH_039), then every deployment signature.
 */
async function verifyReport(
  deps: ConfirmDeps,
  transfer: Transfer & { route: RouteRecord },
  report: BroadcastReport,
  options: CallOptions,
): Promise<void> {
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
}

/**
 * Takes over a route found complete on chain, once only whichever process gets there first; the
 * others only add the signatures it lacked. Answers the transfer as it now is.
 */
export async function takeOver(
  deployments: Pick<DeploymentStore, 'takeOver' | 'addSignatures'>,
  tx: Sql,
  id: number,
  input: { state: Extract<DeploymentState, { kind: 'complete' }>; signatures: VerifiedSignatures; now: Date },
): Promise<Transfer> {
  const { state, signatures, now } = input;
  return (
    (await deployments.takeOver(tx, id, {
      signatures,
      schedule: state.schedule,
      keeperDueAt: state.keeperDueAt,
      now,
    })) ?? (await deployments.addSignatures(tx, id, signatures, now))
  );
}
