import type { KeyMode } from '../domain/api-keys.ts';
import type { EventType } from '../domain/transfer.ts';
import type { Db } from './db.ts';
import type { SecretBox } from './secret-box.ts';
import type { Owner } from './transfers.ts';

/** A registered endpoint. `events` null means every event type. */
export interface WebhookEndpoint {
  id: number;
  integrationId: number;
  mode: KeyMode;
  url: string;
  events: EventType[] | null;
  isActive: boolean;
  createdAt: Date;
}

type EndpointRow = {
  id: string;
  integration_id: string;
  mode: KeyMode;
  url: string;
  events: EventType[] | null;
  is_active: boolean;
  created_at: Date;
};

const toEndpoint = (row: EndpointRow): WebhookEndpoint => ({
  id: Number(row.id),
  integrationId: Number(row.integration_id),
  mode: row.mode,
  url: row.url,
  events: row.events,
  isActive: row.is_active,
  createdAt: row.created_at,
});

/** Webhook endpoints; secrets are sealed at rest and never read back by the API after creation. */
export function createWebhookStore(db: Db, secrets: SecretBox) {
  return {
    /** How many live (not deleted) endpoints an owner has. */
    async count(owner: Owner) {
      const { rows } = await db.query<{ n: string }>(
        'SELECT count(*) AS n FROM webhook_endpoints WHERE integration_id = $1 AND mode = $2 AND deleted_at IS NULL',
        [owner.integrationId, owner.mode],
      );
      return Number(rows[0]!.n);
    },

    /**
     * Registers an endpoint unless the owner already has `maxPerOwner`; the count and the insert
     * run under a lock on the integration so concurrent creates cannot exceed the limit.
     */
    async create(
      owner: Owner,
      input: { url: string; events: EventType[] | null; secret: string; now: Date },
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
    },

    /** The owner's endpoints, oldest first. */
    async list(owner: Owner) {
      const { rows } = await db.query<EndpointRow>(
        `SELECT * FROM webhook_endpoints WHERE integration_id = $1 AND mode = $2 AND deleted_at IS NULL ORDER BY id`,
        [owner.integrationId, owner.mode],
      );
      return rows.map(toEndpoint);
    },

    /** Deletes an endpoint of the owner; false when there was none to delete. */
    async delete(owner: Owner, id: number, now: Date) {
      const { rowCount } = await db.query(
        `UPDATE webhook_endpoints SET deleted_at = $4, is_active = false
          WHERE id = $1 AND integration_id = $2 AND mode = $3 AND deleted_at IS NULL`,
        [id, owner.integrationId, owner.mode, now],
      );
      return rowCount > 0;
    },
  };
}

export type WebhookStore = ReturnType<typeof createWebhookStore>;
