import type { Db, Sql } from './db.ts';
import type { SecretBox } from './secret-box.ts';

/** A stored response, replayed verbatim for a repeated key. */
export interface StoredResponse {
  status: number;
  body: string;
}

/** A key claimed for one request: `lockedAt` tells this claim from a later takeover of the same key. */
export interface Claim {
  scope: string;
  key: string;
  lockedAt: Date;
}

/** The outcome of trying to claim an idempotency key for a request. */
export type ClaimResult =
  | { kind: 'claimed'; claim: Claim }
  | { kind: 'mismatch' }
  | { kind: 'in_progress' }
  | { kind: 'completed'; response: StoredResponse };

type IdempotencyRow = {
  request_hash: Uint8Array;
  state: 'in_progress' | 'completed';
  response_status: number | null;
  response_body: string | null;
};

/**
 * Claims a key, or takes over a record that is past its lifetime (`$7` ms) or a claim of the same
 * request abandoned by a crashed process (older than `$8` ms).
 */
const CLAIM_SQL = `
  INSERT INTO idempotency_keys (scope, key, request_hash, method, path, state, locked_at, created_at)
  VALUES ($1, $2, $3, $4, $5, 'in_progress', $6, $6)
  ON CONFLICT (scope, key) DO UPDATE
     SET request_hash = EXCLUDED.request_hash, method = EXCLUDED.method, path = EXCLUDED.path,
         state = 'in_progress', locked_at = EXCLUDED.locked_at, created_at = EXCLUDED.created_at,
         response_status = NULL, response_body = NULL, completed_at = NULL
   WHERE idempotency_keys.created_at < EXCLUDED.created_at - $7 * interval '1 millisecond'
      OR (idempotency_keys.state = 'in_progress'
          AND idempotency_keys.locked_at < EXCLUDED.created_at - $8 * interval '1 millisecond'
          AND idempotency_keys.request_hash = EXCLUDED.request_hash)
  RETURNING locked_at`;

/**
 * Idempotency keys. A key is claimed with one atomic upsert, so concurrent duplicates (in this
 * process or any other sharing the database) never both run. A claim older than `lockTimeoutMs`
 * with the same request is treated as abandoned by a crashed process and may be taken over; a
 * record older than `ttlMs` is forgotten. Stored responses are sealed at rest: some carry secrets
 * shown once (a new webhook endpoint's signing secret).
 */
export function createIdempotencyStore(
  db: Db,
  options: { ttlMs: number; lockTimeoutMs: number; secrets: SecretBox },
) {
  return {
    /** Claims `key` in `scope` for a request with fingerprint `requestHash`, or says why not. */
    async claim(input: {
      scope: string;
      key: string;
      requestHash: Buffer;
      method: string;
      path: string;
      now: Date;
    }): Promise<ClaimResult> {
      // A record deleted by housekeeping between the two statements is claimed on the next try.
      for (let attempt = 0; attempt < 3; attempt++) {
        const claimed = await db.query<{ locked_at: Date }>(CLAIM_SQL, [
          input.scope,
          input.key,
          input.requestHash,
          input.method,
          input.path,
          input.now,
          options.ttlMs,
          options.lockTimeoutMs,
        ]);
        const lockedAt = claimed.rows[0]?.locked_at;
        if (lockedAt) return { kind: 'claimed', claim: { scope: input.scope, key: input.key, lockedAt } };
        const { rows } = await db.query<IdempotencyRow>(
          `SELECT request_hash, state, response_status, response_body
             FROM idempotency_keys WHERE scope = $1 AND key = $2`,
          [input.scope, input.key],
        );
        const existing = rows[0];
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

    /**
     * Records the response of a claim, through `sql` (the database, or the transaction of the
     * change the response reports, so both commit together). False when the claim is no longer
     * this request's: it was taken over after `lockTimeoutMs`.
     */
    async complete(sql: Sql, claim: Claim, response: StoredResponse, now: Date): Promise<boolean> {
      const { rowCount } = await sql.query(
        `UPDATE idempotency_keys
            SET state = 'completed', response_status = $4, response_body = $5, completed_at = $6
          WHERE scope = $1 AND key = $2 AND locked_at = $3 AND state = 'in_progress'`,
        [claim.scope, claim.key, claim.lockedAt, response.status, options.secrets.seal(response.body), now],
      );
      return rowCount === 1;
    },

    /** Releases a claim whose request produced nothing worth replaying, so a retry can run. */
    async release(claim: Claim): Promise<void> {
      await db.query(
        `DELETE FROM idempotency_keys
          WHERE scope = $1 AND key = $2 AND locked_at = $3 AND state = 'in_progress'`,
        [claim.scope, claim.key, claim.lockedAt],
      );
    },
  };
}

export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;
