import type { Db } from './db.ts';
import {
  KEY_PRINCIPAL_COLUMNS,
  type KeyPrincipal,
  type KeyPrincipalRow,
  toKeyPrincipal,
} from './integrations.ts';

/** A console session as a request finds it: the key it was opened with, as that key is now. */
export interface ConsoleSession {
  principal: KeyPrincipal;
  integrationName: string;
  createdAt: Date;
  expiresAt: Date;
  lastSeenAt: Date;
}

/**
 * Sessions of the console, by the SHA-256 of their token. Each read joins the key and its
 * integration, so a session always answers the key's state now (revoked, suspended).
 */
export function createConsoleSessionStore(db: Db) {
  return {
    /** Stores a new session. */
    async open(input: { tokenHash: Buffer; apiKeyId: number; now: Date; expiresAt: Date }) {
      await db.query(
        `INSERT INTO console_sessions (token_hash, api_key_id, created_at, expires_at, last_seen_at)
         VALUES ($1, $2, $3, $4, $3)`,
        [input.tokenHash, input.apiKeyId, input.now, input.expiresAt],
      );
    },
    /** The session with this token hash unless it ended before `now`; null otherwise. */
    find: (tokenHash: Buffer, now: Date) => findSession(db, tokenHash, now),
    /** Records the session used at `now`, ending at `expiresAt` unless it is used again. */
    async touch(tokenHash: Buffer, now: Date, expiresAt: Date) {
      await db.query('UPDATE console_sessions SET last_seen_at = $2, expires_at = $3 WHERE token_hash = $1', [
        tokenHash,
        now,
        expiresAt,
      ]);
    },
    /** Ends a session (signing out, or its key may no longer be used). */
    async close(tokenHash: Buffer) {
      await db.query('DELETE FROM console_sessions WHERE token_hash = $1', [tokenHash]);
    },
  };
}

export type ConsoleSessionStore = ReturnType<typeof createConsoleSessionStore>;

async function findSession(db: Db, tokenHash: Buffer, now: Date): Promise<ConsoleSession | null> {
  const { rows } = await db.query<
    KeyPrincipalRow & { name: string; created_at: Date; expires_at: Date; last_seen_at: Date }
  >(
    `SELECT ${KEY_PRINCIPAL_COLUMNS}, i.name, s.created_at, s.expires_at, s.last_seen_at
       FROM console_sessions s
       JOIN api_keys k ON k.id = s.api_key_id
       JOIN integrations i ON i.id = k.integration_id
      WHERE s.token_hash = $1 AND s.expires_at > $2`,
    [tokenHash, now],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    principal: toKeyPrincipal(row),
    integrationName: row.name,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastSeenAt: row.last_seen_at,
  };
}
