import type { Db } from './db.ts';
import type { SecretBox } from './secret-box.ts';

/** A stored response, replayed verbatim for a repeated key. */
export interface StoredResponse {
  status: number;
  body: string;
}

/** The outcome of trying to claim an idempotency key for a request. */
export type ClaimResult =
  | { kind: 'claimed' }
  | { kind: 'mismatch' }
  | { kind: 'in_progress' }
  | { kind: 'completed'; response: StoredResponse };

type IdempotencyRow = {
  request_hash: Buffer | Uint8Array;
  state: 'in_progress' | 'completed';
  response_status: number | null;
  response_body: string | null;
};

/**
 * Idempotency keys. Stored responses are sealed at rest: some carry secrets shown once (a new
 * webhook endpoint's signing secret). A key is claimed with one atomic upsert, so concurrent duplicates (in this
 * process or any other sharing the database) never both run. A claim older than `lockTimeoutMs`
 * with the same request is treated as abandoned by a crashed process and may be taken over; a
 * record older than `ttlMs` is forgotten.
 */
export function createIdempotencyStore(
  db: Db,
  options: { ttlMs: number; lockTimeoutMs: number; secrets: SecretBox },
) {
  return {
    /** Claims `key` in `scope` for a request with fingerprint `requestHash`. */
    async claim(input: {
      scope: string;
      key: string;
      requestHash: Buffer;
      method: string;
      path: string;
      now: Date;
    }): Promise<ClaimResult> {
      const expiredBefore = new Date(input.now.getTime() - options.ttlMs);
      const abandonedBefore = new Date(input.now.getTime() - options.lockTimeoutMs);
      for (let attempt = 0; attempt < 3; attempt++) {
        const claimed = await db.query(
          `INSERT INTO idempotency_keys (scope, key, request_hash, method, path, state, locked_at, created_at)
           VALUES ($1, $2, $3, $4, $5, 'in_progress', $6, $6)
           ON CONFLICT (scope, key) DO UPDATE
              SET request_hash = EXCLUDED.request_hash, method = EXCLUDED.method, path = EXCLUDED.path,
                  state = 'in_progress', locked_at = EXCLUDED.locked_at, created_at = EXCLUDED.created_at,
                  response_status = NULL, response_body = NULL, completed_at = NULL
            WHERE idempotency_keys.created_at < $7
               OR (idempotency_keys.state = 'in_progress' AND idempotency_keys.locked_at < $8
                   AND idempotency_keys.request_hash = EXCLUDED.request_hash)
           RETURNING 1`,
          [
            input.scope,
            input.key,
            input.requestHash,
            input.method,
            input.path,
            input.now,
            expiredBefore,
            abandonedBefore,
          ],
        );
        if (claimed.rowCount > 0) return { kind: 'claimed' };

        const { rows } = await db.query<IdempotencyRow>(
          `SELECT request_hash, state, response_status, response_body
             FROM idempotency_keys WHERE scope = $1 AND key = $2`,
          [input.scope, input.key],
        );
        const existing = rows[0];
        // Deleted by the cleanup between the two statements: try again.
        if (!existing) continue;
        if (!Buffer.from(existing.request_hash).equals(input.requestHash)) return { kind: 'mismatch' };
        if (existing.state === 'in_progress') return { kind: 'in_progress' };
        return {
          kind: 'completed',
          response: {
            status: existing.response_status!,
            body: options.secrets.open(existing.response_body!),
          },
        };
      }
      return { kind: 'in_progress' };
    },

    /** Stores the response of a claimed key. */
    async complete(input: { scope: string; key: string; response: StoredResponse; now: Date }) {
      await db.query(
        `UPDATE idempotency_keys
            SET state = 'completed', response_status = $3, response_body = $4, completed_at = $5
          WHERE scope = $1 AND key = $2 AND state = 'in_progress'`,
        [input.scope, input.key, input.response.status, options.secrets.seal(input.response.body), input.now],
      );
    },

    /** Releases a claim whose request produced nothing worth replaying, so a retry can run. */
    async release(input: { scope: string; key: string }) {
      await db.query(`DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND state = 'in_progress'`, [
        input.scope,
        input.key,
      ]);
    },

    /** Deletes records past their time to live; returns how many. */
    async deleteExpired(now: Date) {
      const { rowCount } = await db.query('DELETE FROM idempotency_keys WHERE created_at < $1', [
        new Date(now.getTime() - options.ttlMs),
      ]);
      return rowCount;
    },
  };
}

export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;
