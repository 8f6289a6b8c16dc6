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

/** An operator's console session as a request finds it: what binds it to the admin token, and its times. */
export interface OperatorSession {
  /** HMAC of the admin token's hash and the token hash, keyed by a key derived from ENCRYPTION_KEY. */
  adminTokenMac: Buffer;
  createdAt: Date;
  expiresAt: Date;
  lastSeenAt: Date;
}

/** A one-time form token's use: the session it was made for and its nonce. */
export interface FormUse {
  sessionTokenHash: Buffer;
  nonce: Buffer;
}

/**
 * Sessions of the console, by the SHA-256 of their token: an integrator's, opened with an API key,
 * or an operator's, opened with the admin token (migration 0017). Each read of an integrator's
 * joins the key and its integration, so a session always answers the key's state now (revoked,
 * suspended); a session of one kind is never found as the other.
 */
export function createConsoleSessionStore(db: Db) {
  return {
    /** Stores a new integrator's session. */
    async open(input: { tokenHash: Buffer; apiKeyId: number; now: Date; expiresAt: Date }) {
      await db.query(
        `INSERT INTO console_sessions (token_hash, kind, api_key_id, created_at, expires_at, last_seen_at)
         VALUES ($1, 'integrator', $2, $3, $4, $3)`,
        [input.tokenHash, input.apiKeyId, input.now, input.expiresAt],
      );
    },
    /** Stores a new operator's session. */
    async openOperator(input: { tokenHash: Buffer; adminTokenMac: Buffer; now: Date; expiresAt: Date }) {
      await db.query(
        `INSERT INTO console_sessions (token_hash, kind, admin_token_mac, created_at, expires_at, last_seen_at)
         VALUES ($1, 'operator', $2, $3, $4, $3)`,
        [input.tokenHash, input.adminTokenMac, input.now, input.expiresAt],
      );
    },
    /** The integrator's session with this token hash unless it ended before `now`; null otherwise. */
    find: (tokenHash: Buffer, now: Date) => findSession(db, tokenHash, now),
    /** The operator's session with this token hash unless it ended before `now`; null otherwise. */
    findOperator: (tokenHash: Buffer, now: Date) => findOperatorSession(db, tokenHash, now),
    /** Records the session used at `now`, ending at `expiresAt` unless it is used again. */
    async touch(tokenHash: Buffer, now: Date, expiresAt: Date) {
      await db.query('UPDATE console_sessions SET last_seen_at = $2, expires_at = $3 WHERE token_hash = $1', [
        tokenHash,
        now,
        expiresAt,
      ]);
    },
    /** Ends an integrator's session (signing out, or its key may no longer be used). */
    async close(tokenHash: Buffer) {
      await db.query(`DELETE FROM console_sessions WHERE token_hash = $1 AND kind = 'integrator'`, [
        tokenHash,
      ]);
    },
    /** Ends an operator's session (signing out, or the admin token changed). */
    async closeOperator(tokenHash: Buffer) {
      await db.query(`DELETE FROM console_sessions WHERE token_hash = $1 AND kind = 'operator'`, [tokenHash]);
    },
    /**
     * Records a one-time form token of the session used (migration 0019): true the first time,
     * false when it was used before.
     */
    async useForm(input: FormUse & { now: Date }): Promise<boolean> {
      const { rowCount } = await db.query(
        `INSERT INTO console_form_uses (session_token_hash, nonce, used_at) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING`,
        [input.sessionTokenHash, input.nonce, input.now],
      );
      return rowCount === 1;
    },
    /** Forgets a form token's use whose action did not happen, so that the form may be sent again. */
    async releaseForm(input: FormUse) {
      await db.query('DELETE FROM console_form_uses WHERE session_token_hash = $1 AND nonce = $2', [
        input.sessionTokenHash,
        input.nonce,
      ]);
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
      WHERE s.token_hash = $1 AND s.kind = 'integrator' AND s.expires_at > $2`,
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

async function findOperatorSession(db: Db, tokenHash: Buffer, now: Date): Promise<OperatorSession | null> {
  const { rows } = await db.query<{
    admin_token_mac: Buffer;
    created_at: Date;
    expires_at: Date;
    last_seen_at: Date;
  }>(
    `SELECT admin_token_mac, created_at, expires_at, last_seen_at
       FROM console_sessions
      WHERE token_hash = $1 AND kind = 'operator' AND expires_at > $2`,
    [tokenHash, now],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    adminTokenMac: Buffer.from(row.admin_token_mac),
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastSeenAt: row.last_seen_at,
  };
}
