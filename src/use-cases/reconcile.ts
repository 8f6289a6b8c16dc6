import type { AccountReader, ClockReader } from '../chain/types.ts';
import type { Clock } from '../domain/clock.ts';
import type { RouteRecord, Transfer } from '../domain/transfer.ts';
import type { TransactionChain } from '../platform/send.ts';
import type { Db } from '../store/db.ts';
import type { DeploymentStore } from '../store/deployments.ts';
import type { TransferStore } from '../store/transfers.ts';
import { deploymentState, takeOver } from './confirm.ts';
import { readRoute, recoveryOf } from './route-reads.ts';
import { refuseUnquotedRoute, returnKeeperLamports } from './unquoted.ts';

/** How long after `expiresAt` a deployment may still complete before it counts as abandoned. */
export const ABANDONED_AFTER_MS = 10 * 60_000;

export interface ReconcileDeps {
  db: Pick<Db, 'transaction'>;
  chain: AccountReader & ClockReader & TransactionChain;
  deployments: DeploymentStore;
  transfers: Pick<TransferStore, 'markRecoverable'>;
  programAddress: Parameters<typeof readRoute>[1];
  clock: Clock;
}

/**
 * Brings a prepared transfer in line with the chain, as a final confirm would: a route complete on
 * chain is taken over (funds on chain never wait for a call that may never come), a partial one
 * shows as `deploying`, a funded keeper as `funding`. A route whose terms are not the quoted ones
 * is refused at once (`recoverable`, never run). Once the deployment is abandoned (10 minutes past
 * `expiresAt`) a partial route becomes `recoverable`, and a transfer with nothing on chain
 * `expired`, after its keeper's lamports went back to the source. Answers the transfer as it is now.
 */
export async function reconcileDeployment(deps: ReconcileDeps, transfer: Transfer): Promise<Transfer> {
  if (transfer.status !== 'awaiting_signature' || !transfer.route) return transfer;
  const deployed = transfer as Transfer & { route: RouteRecord };
  const [snapshot, prepared] = await Promise.all([
    readRoute(deps.chain, deps.programAddress, deployed),
    deps.deployments.preparedRouteTerms(transfer.id),
  ]);
  const state = deploymentState(snapshot, deployed, prepared);
  const now = deps.clock.now();
  const abandoned = now.getTime() >= transfer.expiresAt.getTime() + ABANDONED_AFTER_MS;
  const id = transfer.id;

  if (state.kind === 'complete') {
    const signatures = {
      routeInit: transfer.signatures.routeInit,
      sessionInit: transfer.signatures.sessionInit,
      orchestrator: deployed.route.orchestratorSignature,
    };
    return deps.db.transaction((tx) => takeOver(deps.deployments, tx, id, { state, signatures, now }));
  }
  if (state.kind === 'unquoted') {
    const refused = await refuseUnquotedRoute(deps, deployed, state.difference);
    return deps.db.transaction((tx) =>
      deps.transfers.markRecoverable(tx, id, { ...refused, now: deps.clock.now() }),
    );
  }
  if (state.kind === 'partial') {
    if (!abandoned) return deps.db.transaction((tx) => deps.deployments.recordDeploying(tx, id, now));
    const chainNow = (await deps.chain.getClock()).unixTimestamp;
    const recovery = recoveryOf(snapshot, chainNow);
    const lastError = {
      code: 'MH_031',
      message: `The route's deployment was left unfinished ${ABANDONED_AFTER_MS / 60_000} minutes past the quote's expiry; rescue returns everything it holds to the source.`,
    };
    return deps.db.transaction((tx) => deps.transfers.markRecoverable(tx, id, { lastError, recovery, now }));
  }
  if (!abandoned) {
    if (transfer.phase !== 'quoted' || snapshot.keeper.lamports < deployed.route.keeperFundingLamports)
      return transfer;
    return deps.db.transaction((tx) => deps.deployments.recordKeeperFunding(tx, id, null, now));
  }
  // Nothing of the route on chain: the keeper's lamports go back to the source before it expires.
  await returnKeeperLamports(deps, deployed, snapshot.keeper.lamports);
  return deps.db.transaction((tx) => deps.deployments.expireDeployment(tx, id, now));
}
