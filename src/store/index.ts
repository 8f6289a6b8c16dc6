import type { Db } from './db.ts';
import { createIdempotencyStore } from './idempotency.ts';
import { createIntegrationStore } from './integrations.ts';

/** How long an idempotency claim may run before another request may consider it abandoned. */
const IDEMPOTENCY_LOCK_TIMEOUT_MS = 120_000;

/** Every repository over one database. */
export function createStore(db: Db, options: { idempotencyTtlMs: number }) {
  return {
    integrations: createIntegrationStore(db),
    idempotency: createIdempotencyStore(db, {
      ttlMs: options.idempotencyTtlMs,
      lockTimeoutMs: IDEMPOTENCY_LOCK_TIMEOUT_MS,
    }),
  };
}

export type Store = ReturnType<typeof createStore>;
