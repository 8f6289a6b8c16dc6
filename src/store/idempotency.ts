import { createBatcher } from './batcher.ts';
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

/** A claimed key's response to record. */
export interface Completion {
  scope: string;
  key: string;
  response: StoredResponse;
  now: Date;
}

/**
 * The statement recording responses of claimed keys (usable as a CTE of a caller's own statement,
 * so a change and the record of having answered it commit together). Its five parameters start at
 * `$first`; {@link completionParams} builds them.
 */
export function completionSql(first: number) {
  const p = (n: number) => `$${first + n}`;
  return `UPDATE idempotency_keys AS k
     SET state = 'completed', response_status = c.status, response_body = c.body, completed_at = c.now
    FROM unnest(${p(0)}::text[], ${p(1)}::text[], ${p(2)}::int[], ${p(3)}::text[], ${p(4)}::timestamptz[])
         AS c(scope, key, status, body, now)
   WHERE k.scope = c.scope AND k.key = c.key AND k.state = 'in_progress'`;
}

/** The parameters of {@link completionSql}; responses are sealed (some carry secrets shown once). */
export function completionParams(secrets: SecretBox, completions: readonly Completion[]) {
  return [
    completions.map((completion) => completion.scope),
    completions.map((completion) => completion.key),
    completions.map((completion) => completion.response.status),
    completions.map((completion) => secrets.seal(completion.response.body)),
    completions.map((completion) => completion.now),
  ];
}

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
  type ClaimInput = {
    scope: string;
    key: string;
    requestHash: Buffer;
    method: string;
    path: string;
    now: Date;
  };
  const id = (input: { scope: string; key: string }) => `${input.scope}\u0000${input.key}`;

  /** The outcome for requests whose key was not claimed: replay, conflict, or still running. */
  async function existingOutcomes(inputs: ClaimInput[]): Promise<(ClaimResult | null)[]> {
    const { rows } = await db.query<IdempotencyRow & { scope: string; key: string }>(
      `SELECT scope, key, request_hash, state, response_status, response_body
         FROM idempotency_keys WHERE (scope, key) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
      [inputs.map((input) => input.scope), inputs.map((input) => input.key)],
    );
    const found = new Map(rows.map((row) => [id(row), row]));
    return inputs.map((input): ClaimResult | null => {
      const existing = found.get(id(input));
      // Deleted by housekeeping in between: the caller claims again.
      if (!existing) return null;
      if (!Buffer.from(existing.request_hash).equals(input.requestHash)) return { kind: 'mismatch' };
      if (existing.state === 'in_progress') return { kind: 'in_progress' };
      return {
        kind: 'completed',
        response: { status: existing.response_status!, body: options.secrets.open(existing.response_body!) },
      };
    });
  }

  /**
   * Claims the keys of a batch in one upsert. Within a batch only the first request of a key may
   * claim it; any later one finds it in progress, as it would a moment later.
   */
  async function claimBatch(inputs: ClaimInput[]): Promise<ClaimResult[]> {
    const claimedHere: ClaimInput[] = [];
    try {
      return await claimEach(inputs, claimedHere);
    } catch (error) {
      // The batch fails as a whole (and its requests are retried one by one), so the keys it had
      // already claimed are let go: kept, each retry would find its own key in progress.
      await releaseAll(claimedHere).catch(() => {});
      throw error;
    }
  }

  async function claimEach(inputs: ClaimInput[], claimedHere: ClaimInput[]): Promise<ClaimResult[]> {
    const results: (ClaimResult | null)[] = inputs.map(() => null);
    for (let attempt = 0; attempt < 3 && results.includes(null); attempt++) {
      const open = inputs
        .map((input, index) => ({ input, index }))
        .filter(({ index }) => results[index] === null);
      const leaders = new Map<string, ClaimInput>();
      for (const { input } of open) if (!leaders.has(id(input))) leaders.set(id(input), input);
      const candidates = [...leaders.values()];
      // Unsynced: the request's own durable commit (or, for a read, its completion) flushes it too.
      const { rows } = await db.queryUnsynced<{ scope: string; key: string }>(
        `INSERT INTO idempotency_keys (scope, key, request_hash, method, path, state, locked_at, created_at)
         SELECT scope, key, request_hash, method, path, 'in_progress', now, now
           FROM unnest($1::text[], $2::text[], $3::bytea[], $4::text[], $5::text[], $6::timestamptz[])
                AS c(scope, key, request_hash, method, path, now)
         ON CONFLICT (scope, key) DO UPDATE
            SET request_hash = EXCLUDED.request_hash, method = EXCLUDED.method, path = EXCLUDED.path,
                state = 'in_progress', locked_at = EXCLUDED.locked_at, created_at = EXCLUDED.created_at,
                response_status = NULL, response_body = NULL, completed_at = NULL
          WHERE idempotency_keys.created_at < EXCLUDED.created_at - $7 * interval '1 millisecond'
             OR (idempotency_keys.state = 'in_progress'
                 AND idempotency_keys.locked_at < EXCLUDED.created_at - $8 * interval '1 millisecond'
                 AND idempotency_keys.request_hash = EXCLUDED.request_hash)
         RETURNING scope, key`,
        [
          candidates.map((input) => input.scope),
          candidates.map((input) => input.key),
          candidates.map((input) => input.requestHash),
          candidates.map((input) => input.method),
          candidates.map((input) => input.path),
          candidates.map((input) => input.now),
          options.ttlMs,
          options.lockTimeoutMs,
        ],
      );
      const claimed = new Set(rows.map(id));
      const others: { input: ClaimInput; index: number }[] = [];
      for (const entry of open) {
        if (claimed.has(id(entry.input)) && leaders.get(id(entry.input)) === entry.input) {
          results[entry.index] = { kind: 'claimed' };
          claimedHere.push(entry.input);
        } else others.push(entry);
      }
      if (others.length === 0) break;
      const outcomes = await existingOutcomes(others.map(({ input }) => input));
      others.forEach(({ index }, position) => {
        results[index] = outcomes[position]!;
      });
    }
    return results.map((result) => result ?? { kind: 'in_progress' });
  }

  async function completeBatch(inputs: Completion[]) {
    await db.query(completionSql(1), completionParams(options.secrets, inputs));
    return inputs.map(() => undefined);
  }

  async function releaseAll(inputs: readonly { scope: string; key: string }[]) {
    if (inputs.length === 0) return;
    await db.query(
      `DELETE FROM idempotency_keys AS k USING unnest($1::text[], $2::text[]) AS r(scope, key)
        WHERE k.scope = r.scope AND k.key = r.key AND k.state = 'in_progress'`,
      [inputs.map((input) => input.scope), inputs.map((input) => input.key)],
    );
  }

  // Claims and completions of concurrent requests share statements (see createBatcher).
  const claim = createBatcher({ maxBatch: 128, run: claimBatch });
  const complete = createBatcher({ maxBatch: 128, run: completeBatch });

  return {
    /** Claims `key` in `scope` for a request with fingerprint `requestHash`. */
    claim: (input: ClaimInput): Promise<ClaimResult> => claim(input),

    /** Stores the response of a claimed key. */
    complete: async (input: Completion) => {
      await complete(input);
    },

    /** Releases a claim whose request produced nothing worth replaying, so a retry can run. */
    release: (input: { scope: string; key: string }) => releaseAll([input]),
  };
}

export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;
