import { createKeyPairSignerFromPrivateKeyBytes } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import type { AccountReader, ClockReader } from '../chain/types.ts';
import type { Clock } from '../domain/clock.ts';
import { LAMPORTS_PER_SIGNATURE } from '../domain/route.ts';
import type { RouteRecord, Transfer } from '../domain/transfer.ts';
import { PlatformTransactionError, sendAndConfirm, type TransactionChain } from '../platform/send.ts';
import type { Db } from '../store/db.ts';
import type { RouteDeploymentStore } from '../store/route-deployments.ts';
import { deploymentState } from './confirm.ts';
import { readRoute, recoveryOf } from './route-reads.ts';

/** How long after `expiresAt` a deployment may still complete before it counts as abandoned. */
export const ABANDONED_AFTER_MS = 10 * 60_000;

export interface ReconcileDeps {
  db: Pick<Db, 'transaction'>;
  chain: AccountReader & ClockReader & TransactionChain;
  routes: RouteDeploymentStore;
  programAddress: Parameters<typeof readRoute>[1];
  clock: Clock;
}

/**
 * Brings a prepared transfer in line with the chain, as a final confirm would: a route complete on
 * chain is taken over (funds on chain never wait for a call that may never come), a partial one
 * shows as `deploying`, a funded keeper as `funding`. Once the deployment is abandoned (10 minutes
 * past `expiresAt`) a partial route becomes `recoverable`, and a transfer with nothing on chain
 * `expired`, after its keeper's lamports went back to the source. Answers the transfer as it is now.
 */
export async function reconcileDeployment(deps: ReconcileDeps, transfer: Transfer): Promise<Transfer> {
  if (transfer.status !== 'awaiting_signature' || !transfer.route) return transfer;
  const deployed = transfer as Transfer & { route: RouteRecord };
  const snapshot = await readRoute(deps.chain, deps.programAddress, deployed);
  const state = deploymentState(snapshot, deployed);
  const now = deps.clock.now();
  const abandoned = now.getTime() >= transfer.expiresAt.getTime() + ABANDONED_AFTER_MS;
  const id = transfer.id;

  if (state.kind === 'complete') {
    const signatures = {
      routeInit: transfer.signatures.routeInit,
      sessionInit: transfer.signatures.sessionInit,
      orchestrator: deployed.route.orchestratorSignature,
    };
    return deps.db.transaction(
      async (tx) =>
        (await deps.routes.takeOver(tx, id, {
          signatures,
          schedule: state.schedule,
          keeperDueAt: state.keeperDueAt,
          now,
        })) ?? (await deps.routes.addSignatures(tx, id, signatures, now)),
    );
  }
  if (state.kind === 'partial') {
    if (!abandoned) return deps.db.transaction((tx) => deps.routes.recordDeploying(tx, id, now));
    const chainNow = (await deps.chain.getClock()).unixTimestamp;
    const recovery = recoveryOf(snapshot, chainNow);
    const lastError = {
      code: 'MH_031',
      message: `The route's deployment was left unfinished ${ABANDONED_AFTER_MS / 60_000} minutes past the quote's expiry; rescue returns everything it holds to the source.`,
    };
    return deps.db.transaction((tx) => deps.routes.markRecoverable(tx, id, { lastError, recovery, now }));
  }
  if (!abandoned) {
    if (transfer.phase !== 'quoted' || snapshot.keeper.lamports < deployed.route.keeperFundingLamports)
      return transfer;
    return deps.db.transaction((tx) => deps.routes.recordKeeperFunding(tx, id, null, now));
  }
  // Nothing of the route on chain: the keeper's lamports go back to the source before it expires.
  if (snapshot.keeper.lamports > LAMPORTS_PER_SIGNATURE) {
    const privateKey = await deps.routes.keeperPrivateKey(id);
    const keeper = await createKeyPairSignerFromPrivateKeyBytes(privateKey!);
    try {
      await sendAndConfirm(deps.chain, keeper, [
        getTransferSolInstruction({
          source: keeper,
          destination: transfer.sourceOwner,
          amount: snapshot.keeper.lamports - LAMPORTS_PER_SIGNATURE,
        }),
      ]);
    } catch (error) {
      // Another process (a refresh, the reconciler elsewhere) may have returned them since the
      // snapshot: then this transaction could not pay, and there is nothing left to return.
      const left = (await deps.chain.getAccount(keeper.address))?.lamports ?? 0n;
      if (!(error instanceof PlatformTransactionError) || left > LAMPORTS_PER_SIGNATURE) throw error;
    }
  }
  return deps.db.transaction((tx) => deps.routes.expireDeployment(tx, id, now));
}
