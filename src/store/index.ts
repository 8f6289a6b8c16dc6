import { createConsoleSessionStore } from './console-sessions.ts';
import type { Db } from './db.ts';
import { createDeliveryStore } from './deliveries.ts';
import { createDeploymentStore } from './deployments.ts';
import { createHopStore } from './hops.ts';
import { createIdempotencyStore } from './idempotency.ts';
import { createIntegrationStore } from './integrations.ts';
import { createKeeperHealthStore } from './keeper-health.ts';
import { createRecoveryStore } from './recovery.ts';
import { createRetentionStore } from './retention.ts';
import { createRewardStore } from './rewards.ts';
import type { SecretBox } from './secret-box.ts';
import { createTransferTotalsStore } from './transfer-totals.ts';
import { createTransferStore } from './transfers.ts';
import { createWebhookStore } from './webhooks.ts';

/** How long an idempotency claim may run before another request may consider it abandoned. */
const IDEMPOTENCY_LOCK_TIMEOUT_MS = 120_000;

/** Every repository over one database. */
export function createStore(db: Db, options: { idempotencyTtlMs: number; secrets: SecretBox }) {
  return {
    integrations: createIntegrationStore(db),
    consoleSessions: createConsoleSessionStore(db),
    retention: createRetentionStore(db),
    transfers: createTransferStore(db),
    transferTotals: createTransferTotalsStore(db),
    deployments: createDeploymentStore(db, options.secrets),
    hops: createHopStore(db, options.secrets),
    keeperHealth: createKeeperHealthStore(db),
    recovery: createRecoveryStore(db),
    rewards: createRewardStore(db),
    webhooks: createWebhookStore(db, options.secrets),
    deliveries: createDeliveryStore(db, options.secrets),
    idempotency: createIdempotencyStore(db, {
      ttlMs: options.idempotencyTtlMs,
      lockTimeoutMs: IDEMPOTENCY_LOCK_TIMEOUT_MS,
      secrets: options.secrets,
    }),
  };
}

export type Store = ReturnType<typeof createStore>;
