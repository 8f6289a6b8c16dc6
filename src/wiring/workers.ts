import type { Config } from '../config.ts';
import { priorityFeePolicy } from '../platform/platform.ts';
import { createHttpScreening, createListScreening, NO_SCREENING } from '../screening/providers.ts';
import { startWorkerPresence } from '../store/worker-processes.ts';
import { createRouteScreening } from '../use-cases/screening.ts';
import { createDeploymentReconciler } from '../workers/deployment-reconciler.ts';
import { createExpiryWorker } from '../workers/expiry.ts';
import { createHousekeepingWorker } from '../workers/housekeeping.ts';
import { createKeeperWorker } from '../workers/keeper.ts';
import { createOverdueRouteWorker } from '../workers/overdue-routes.ts';
import { createRewardClaimWorker } from '../workers/reward-claims.ts';
import { createRollUpWorker } from '../workers/roll-ups.ts';
import { createWebhookDeliveryWorker } from '../workers/webhook-delivery.ts';
import type { ServiceParts, Worker } from './parts.ts';

/** What a worker role is given: the shared parts and this worker process's id (its claims name it). */
type WorkerParts = ServiceParts & { worker: string };

/** Creates one background worker from the shared parts. */
type WorkerRole = (parts: WorkerParts) => Worker;

/** Moves quotes past their expiry to `expired`. */
const expiryRole: WorkerRole = ({ store, clock, logger }) =>
  createExpiryWorker({ transfers: store.transfers, clock, log: logger.child({ worker: 'expiry' }) });

/** Follows prepared transfers on chain until their deployment is over (taken over, expired or recoverable). */
const reconcilerRole: WorkerRole = ({ db, chain, store, platform, clock, logger }) =>
  createDeploymentReconciler({
    db,
    chain,
    deployments: store.deployments,
    transfers: store.transfers,
    programAddress: platform.programAddress,
    clock,
    log: logger.child({ worker: 'deployment-reconciler' }),
  });

/** Records routes past their on-chain deadline as the chain shows them (`recoverable`). */
const overdueRole: WorkerRole = ({ db, chain, store, platform, clock, logger }) =>
  createOverdueRouteWorker({
    db,
    chain,
    hops: store.hops,
    transfers: store.transfers,
    programAddress: platform.programAddress,
    clock,
    log: logger.child({ worker: 'overdue-routes' }),
  });

/** The keeper: screens routes and advances each one's next step when it falls due. */
const keeperRole: WorkerRole = ({
  config,
  db,
  chain,
  onChainTimeTravel,
  store,
  platform,
  clock,
  metrics,
  logger,
  worker,
}) =>
  createKeeperWorker({
    worker,
    db,
    listen: db,
    chain,
    hops: store.hops,
    transfers: store.transfers,
    programAddress: platform.programAddress,
    priorityFees: priorityFeePolicy(platform, config.chain.priorityFeeMicroLamportsPerCu),
    screen: createRouteScreening({
      provider: screeningProvider(config),
      db,
      chain,
      platform,
      transfers: store.transfers,
      clock,
    }),
    clock,
    ...(onChainTimeTravel ? { onClockJump: onChainTimeTravel } : {}),
    metrics,
    log: logger.child({ worker: 'keeper' }),
  });

/** Deletes recent-history rows past their lifetime: idempotency records, events and their deliveries. */
const housekeepingRole: WorkerRole = ({ config, store, clock, logger }) =>
  createHousekeepingWorker({
    retention: store.retention,
    clock,
    log: logger.child({ worker: 'housekeeping' }),
    idempotencyTtlMs: config.idempotencyTtlMs,
    eventRetentionMs: config.eventRetentionMs,
  });

/** Folds what writers append into totals: the listing's and the keeper page's stay cheap to read. */
const rollUpsRole: WorkerRole = ({ store, logger }) =>
  createRollUpWorker({
    rollUps: {
      'transfer totals': store.transferTotals.rollUp,
      'hop lateness': store.keeperHealth.rollUpLateness,
    },
    log: logger.child({ worker: 'roll-ups' }),
  });

/** Completes reward claims whose sender stopped before their payout was settled. */
const rewardClaimsRole: WorkerRole = ({ db, chain, store, platform, clock, metrics, logger }) =>
  createRewardClaimWorker({
    db,
    rewards: store.rewards,
    chain,
    platform,
    clock,
    metrics,
    log: logger.child({ worker: 'reward-claims' }),
  });

/** Delivers webhook events to the integrations' endpoints. */
const deliveryRole: WorkerRole = ({ db, store, webhookSender, clock, logger, worker }) =>
  createWebhookDeliveryWorker({
    worker,
    db,
    deliveries: store.deliveries,
    sender: webhookSender,
    clock,
    log: logger.child({ worker: 'webhook-delivery' }),
  });

/**
 * The background workers, started in this order and stopped in the reverse one. A new worker is a
 * line here and its role above.
 */
const WORKER_ROLES: readonly WorkerRole[] = [
  expiryRole,
  reconcilerRole,
  overdueRole,
  keeperRole,
  housekeepingRole,
  rollUpsRole,
  rewardClaimsRole,
  deliveryRole,
];

/**
 * Registers this process as a worker (its claims hold while it says it is alive), creates every
 * worker, then starts them in order; each stops at close, the last started first, and the process
 * leaves the worker register after them all.
 */
export async function startWorkers(parts: ServiceParts): Promise<void> {
  const presence = await startWorkerPresence(parts.db, parts.logger.child({ worker: 'presence' }));
  parts.onStop(presence.stop);
  const workers = WORKER_ROLES.map((role) => role({ ...parts, worker: presence.id }));
  for (const worker of workers) {
    worker.start();
    parts.onStop(() => worker.stop());
  }
}

/** Where routes are screened: the screening API when configured, else the deny list (empty: none). */
function screeningProvider(config: Config) {
  const { url, apiKey, denylist } = config.platform.screening;
  if (url) return createHttpScreening({ baseUrl: url, apiKey });
  return config.platform.settings.screeningRequired ? createListScreening(denylist) : NO_SCREENING;
}
