import { setTimeout as delay } from 'node:timers/promises';
import type { BlockhashReader } from '../chain/types.ts';
import { allows } from '../domain/lifecycle.ts';
import { assertNotExpired, expiredError, type Transfer } from '../domain/transfer.ts';
import type { DeploymentStore } from '../store/deployments.ts';
import { ReadsBehindChain } from './bundle-transactions.ts';
import type { Commit } from './commit.ts';
import { dependencyDeadline } from './deadline.ts';
import { type PreparedBundle, prepareBundle } from './deployment-bundle.ts';
import type { DeploymentBundleDeps } from './deployment-reads.ts';

export type PrepareDeps = DeploymentBundleDeps & {
  deployments: Pick<DeploymentStore, 'assignRoute' | 'recordPrepared' | 'recordRouteTerms'>;
};

/** A prepare's answer: the transfer, and the bundle its source signs. */
export interface Prepared {
  transfer: Transfer;
  preparedTxs: PreparedBundle;
}

/**
 * Prepare: the bundle the source signs to deploy the route, with what is on chain already left
 * out. A quote past `expiresAt` is MH_034. A transfer whose deployment is over answers an empty
 * bundle; past `expiresAt` only a route that was taken over has anything left to answer for.
 * The bundle is handed out only once recorded with the terms its route creation carries.
 */
export async function prepareTransfer<R>(
  deps: PrepareDeps,
  found: Transfer,
  commit: Commit<Prepared, R>,
): Promise<R> {
  const now = deps.clock.now();
  assertNotExpired(found, now);
  const signal = dependencyDeadline();
  if (!allows('prepared', found.phase)) {
    if (found.depositReceivedAt === null && found.expiresAt.getTime() <= now.getTime()) {
      throw expiredError(found);
    }
    const preparedTxs = await nothingToDo(deps.chain, found, signal);
    return commit(async () => ({ transfer: found, preparedTxs }));
  }
  const { transfer, bundle, terms } = await bundleFromCurrentReads(deps, found, signal);
  return commit(async (tx) => {
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
    return { transfer: prepared, preparedTxs: bundle };
  });
}

/**
 * The bundle, built again after a moment while the reads it is built from lag the chain (a node
 * behind, a wallet's transaction landing meanwhile), until the request's deadline.
 */
async function bundleFromCurrentReads(deps: PrepareDeps, found: Transfer, signal: AbortSignal) {
  for (;;) {
    try {
      return await prepareBundle(deps, found, { signal });
    } catch (error) {
      if (!(error instanceof ReadsBehindChain)) throw error;
      await delay(READS_RETRY_MS, undefined, { signal }).catch(() => {
        throw error;
      });
    }
  }
}

/** How long a prepare waits for lagging reads to catch up before building the bundle again. */
const READS_RETRY_MS = 400;

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
