import type { KeyMode } from '../domain/api-keys.ts';
import type { Owner } from '../domain/integration.ts';
import type { EventType } from '../domain/transfer.ts';
import { RETRY_WINDOW_MS } from '../domain/webhook-retry.ts';
import { DELIVERY_CHANNEL } from './channels.ts';
import type { Db } from './db.ts';
import type { SecretBox } from './secret-box.ts';

/** A registered endpoint. `events` null means every event type. */
export interface WebhookEndpoint {
  id: number;
  integrationId: number;
  mode: KeyMode;
  url: string;
  events: EventType[] | null;
  isActive: boolean;
  createdAt: Date;
  /** Until when the secret replaced by the last rotation still signs deliveries; null when none does. */
  previousSecretExpiresAt: Date | null;
  /** When failing deliveries disabled the endpoint; null unless disabled that way. */
  disabledAt: Date | null;
}

/** What registering an endpoint takes: its URL, the event types it wants, its signing secret. */
interface NewEndpoint {
  url: string;
  events: EventType[] | null;
  secret: string;
  now: Date;
}

/** Webhook endpoints; secrets are sealed at rest and never read back by the API after creation. */
export function createWebhookStore(db: Db, secrets: SecretBox) {
  return {
    count: (owner: Owner) => countEndpoints(db, owner),
    create: (owner: Owner, input: NewEndpoint, maxPerOwner: number) =>
      createEndpoint(db, secrets, owner, input, maxPerOwner),
    list: (owner: Owner) => listEndpoints(db, owner),
    get: (owner: Owner, id: number) => getEndpoint(db, owner, id),
    rotateSecret: (owner: Owner, id: number, input: { secret: string; overlapMs: number; now: Date }) =>
      rotateSecret(db, secrets, owner, id, input),
    enable: (owner: Owner, id: number, now: Date) => enableEndpoint(db, owner, id, now),
    delete: (owner: Owner, id: number, now: Date) => deleteEndpoint(db, owner, id, now),
  };
}

export type WebhookStore = ReturnType<typeof createWebhookStore>;

/** How many live (not deleted) endpoints an owner has. */
async function countEndpoints(db: Db, owner: Owner): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    'SELECT count(*) AS n FROM webhook_endpoints WHERE integration_id = $1 AND mode = $2 AND deleted_at IS NULL',
    [owner.integrationId, owner.mode],
  );
  return Number(rows[0]!.n);
}

/**
 * Registers an endpoint unless the owner already has `maxPerOwner`; the count and the insert
 * run under a lock on the integration so concurrent creates cannot exceed the limit.
 */
function createEndpoint(
  db: Db,
  secrets: SecretBox,
  owner: Owner,
  input: NewEndpoint,
  maxPerOwner: number,
): Promise<WebhookEndpoint | 'limit_reached'> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT 1 FROM integrations WHERE id = $1 FOR UPDATE', [owner.integrationId]);
    const { rows: counted } = await tx.query<{ n: string }>(
      'SELECT count(*) AS n FROM webhook_endpoints WHERE integration_id = $1 AND mode = $2 AND deleted_at IS NULL',
      [owner.integrationId, owner.mode],
    );
    if (Number(counted[0]!.n) >= maxPerOwner) return 'limit_reached';
    const { rows } = await tx.query<EndpointRow>(
      `INSERT INTO webhook_endpoints (integration_id, mode, url, events, secret_sealed, created_at)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
      [owner.integrationId, owner.mode, input.url, input.events, secrets.seal(input.secret), input.now],
    );
    return toEndpoint(rows[0]!);
  });
}

/** The owner's endpoints, oldest first. */
async function listEndpoints(db: Db, owner: Owner): Promise<WebhookEndpoint[]> {
  const { rows } = await db.query<EndpointRow>(
    `SELECT * FROM webhook_endpoints WHERE integration_id = $1 AND mode = $2 AND deleted_at IS NULL ORDER BY id`,
    [owner.integrationId, owner.mode],
  );
  return rows.map(toEndpoint);
}

/** One endpoint of the owner, or null. */
async function getEndpoint(db: Db, owner: Owner, id: number): Promise<WebhookEndpoint | null> {
  const { rows } = await db.query<EndpointRow>(
    'SELECT * FROM webhook_endpoints WHERE id = $1 AND integration_id = $2 AND mode = $3 AND deleted_at IS NULL',
    [id, owner.integrationId, owner.mode],
  );
  return rows[0] ? toEndpoint(rows[0]) : null;
}

/**
 * Replaces the signing secret. The replaced one keeps signing (as a second `v1`) until
 * `now + overlapMs`; an older one still overlapping is dropped. Null when there is no such endpoint.
 */
async function rotateSecret(
  db: Db,
  secrets: SecretBox,
  owner: Owner,
  id: number,
  input: { secret: string; overlapMs: number; now: Date },
): Promise<WebhookEndpoint | null> {
  const overlapUntil = input.overlapMs > 0 ? new Date(input.now.getTime() + input.overlapMs) : null;
  const { rows } = await db.query<EndpointRow>(
    `UPDATE webhook_endpoints
        SET secret_sealed = $4,
            previous_secret_sealed = CASE WHEN $5::timestamptz IS NULL THEN NULL ELSE secret_sealed END,
            previous_secret_expires_at = $5
      WHERE id = $1 AND integration_id = $2 AND mode = $3 AND deleted_at IS NULL
      RETURNING *`,
    [id, owner.integrationId, owner.mode, secrets.seal(input.secret), overlapUntil],
  );
  return rows[0] ? toEndpoint(rows[0]) : null;
}

/**
 * Re-activates an endpoint. When it was inactive, its pending deliveries start a new round of
 * attempts now, with a fresh retry window, and workers are woken. Null when there is no such endpoint.
 */
function enableEndpoint(db: Db, owner: Owner, id: number, now: Date): Promise<WebhookEndpoint | null> {
  return db.transaction(async (tx) => {
    const { rows: before } = await tx.query<EndpointRow>(
      `SELECT * FROM webhook_endpoints WHERE id = $1 AND integration_id = $2 AND mode = $3 AND deleted_at IS NULL
        FOR UPDATE`,
      [id, owner.integrationId, owner.mode],
    );
    const current = before[0];
    if (!current) return null;
    if (current.is_active) return toEndpoint(current);
    const { rows } = await tx.query<EndpointRow>(
      `UPDATE webhook_endpoints SET is_active = true, disabled_at = NULL, failing_since = NULL
        WHERE id = $1 RETURNING *`,
      [id],
    );
    await tx.query(
      `UPDATE webhook_deliveries
          SET attempts = 0, next_attempt_at = $2, retry_until = $3, lease_token = NULL
        WHERE endpoint_id = $1 AND status = 'pending' AND (lease_token IS NULL OR next_attempt_at <= $2)`,
      [id, now, new Date(now.getTime() + RETRY_WINDOW_MS)],
    );
    await tx.query('SELECT pg_notify($1, $2)', [DELIVERY_CHANNEL, '']);
    return toEndpoint(rows[0]!);
  });
}

/** Deletes an endpoint of the owner; false when there was none to delete. */
async function deleteEndpoint(db: Db, owner: Owner, id: number, now: Date): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE webhook_endpoints SET deleted_at = $4, is_active = false
      WHERE id = $1 AND integration_id = $2 AND mode = $3 AND deleted_at IS NULL`,
    [id, owner.integrationId, owner.mode, now],
  );
  return rowCount > 0;
}

type EndpointRow = {
  id: string;
  integration_id: string;
  mode: KeyMode;
  url: string;
  events: EventType[] | null;
  is_active: boolean;
  created_at: Date;
  previous_secret_expires_at: Date | null;
  disabled_at: Date | null;
};

function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: Number(row.id),
    integrationId: Number(row.integration_id),
    mode: row.mode,
    url: row.url,
    events: row.events,
    isActive: row.is_active,
    createdAt: row.created_at,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    disabledAt: row.disabled_at,
  };
}
