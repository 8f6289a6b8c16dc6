import type { Db } from './db.ts';
import { deleteHopLateness } from './hop-lateness.ts';

/**
 * Deletion of what the service keeps only for a while: idempotency records past their lifetime,
 * events past the retention window with their deliveries and delivery attempts, worker
 * processes long silent, console sessions that ended, and the minutes of the hop lateness roll-up
 * past the keeper page's windows. Each call
 * deletes at most `limit` rows of its kind, oldest first, so that no statement runs long.
 */
export function createRetentionStore(db: Db) {
  return {
    /** Deletes idempotency records created before `before`; returns how many. */
    async deleteIdempotencyRecords(before: Date, limit: number) {
      const { rowCount } = await db.query(
        `DELETE FROM idempotency_keys WHERE ctid IN (
           SELECT ctid FROM idempotency_keys WHERE created_at < $1 LIMIT $2)`,
        [before, limit],
      );
      return rowCount;
    },

    /**
     * Deletes events created before `before`, with their deliveries and attempts; returns how many
     * events. An event with a delivery still pending to an active endpoint (resent or re-armed near
     * the end of the window) is kept until that delivery ends, so that no worker is left holding a
     * delivery that no longer exists.
     */
    async deleteEvents(before: Date, limit: number) {
      const { rows } = await db.query<{ deleted: string }>(
        `WITH old AS (
           SELECT id FROM events event
            WHERE created_at < $1
              AND NOT EXISTS (SELECT 1 FROM webhook_deliveries pending
                                JOIN webhook_endpoints endpoint ON endpoint.id = pending.endpoint_id
                               WHERE pending.event_id = event.id AND pending.status = 'pending'
                                 AND endpoint.is_active AND endpoint.deleted_at IS NULL)
            ORDER BY created_at LIMIT $2
         ), old_deliveries AS (
           SELECT id FROM webhook_deliveries WHERE event_id IN (SELECT id FROM old)
         ), attempts AS (
           DELETE FROM webhook_delivery_attempts WHERE delivery_id IN (SELECT id FROM old_deliveries)
         ), deliveries AS (
           DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM old_deliveries)
         ), deleted AS (
           DELETE FROM events WHERE id IN (SELECT id FROM old) RETURNING 1
         )
         SELECT count(*) AS deleted FROM deleted`,
        [before, limit],
      );
      return Number(rows[0]!.deleted);
    },

    /** Forgets worker processes silent for a day (src/store/worker-processes.ts); returns how many. */
    async deleteSilentWorkers() {
      const { rowCount } = await db.query(
        `DELETE FROM worker_processes WHERE seen_at < clock_timestamp() - interval '1 day'`,
      );
      return rowCount;
    },

    /** Deletes console sessions that ended before `now`; returns how many. */
    async deleteEndedConsoleSessions(now: Date, limit: number) {
      const { rowCount } = await db.query(
        `DELETE FROM console_sessions WHERE token_hash IN (
           SELECT token_hash FROM console_sessions WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2)`,
        [now, limit],
      );
      return rowCount;
    },

    /** Deletes the hop lateness roll-up's minutes before `before`; returns how many rows. */
    deleteHopLateness: (before: Date, limit: number) => deleteHopLateness(db, before, limit),

    /** Deletes test-send attempts (which belong to no event) made before `before`; returns how many. */
    async deleteTestAttempts(before: Date, limit: number) {
      const { rowCount } = await db.query(
        `DELETE FROM webhook_delivery_attempts WHERE id IN (
           SELECT id FROM webhook_delivery_attempts
            WHERE delivery_id IS NULL AND attempted_at < $1 ORDER BY attempted_at LIMIT $2)`,
        [before, limit],
      );
      return rowCount;
    },
  };
}

export type RetentionStore = ReturnType<typeof createRetentionStore>;
