import type { KeyMode } from '../domain/api-keys.ts';
import type { IntegrationSettingsInput, IntegrationStatus } from '../domain/integration.ts';
import { AUTH_CHANGED_CHANNEL } from './channels.ts';
import type { Db, Sql } from './db.ts';

/** Arbitrary constant: the advisory lock taken while issuing the first key. */
const FIRST_INTEGRATION_LOCK_KEY = 4_271_003_002;
/** The `service_settings` row recording that local mode's first key was shown (its id), or not needed. */
const FIRST_KEY_SHOWN_SETTING = 'first_key_shown';

export interface IntegrationRecord {
  id: number;
  name: string;
  status: IntegrationStatus;
  settings: IntegrationSettingsInput;
  createdAt: Date;
  updatedAt: Date;
}

export interface ApiKeyRecord {
  id: number;
  integrationId: number;
  mode: KeyMode;
  hint: string;
  createdAt: Date;
  revokedAt: Date | null;
  /** When the key last authenticated a request or opened a console session, to the minute; null if never. */
  lastUsedAt: Date | null;
}

/** What authentication needs to know about a presented key, in one read. */
export interface KeyPrincipal {
  keyId: number;
  mode: KeyMode;
  revoked: boolean;
  integrationId: number;
  integrationStatus: IntegrationStatus;
  settings: IntegrationSettingsInput;
}

/** A key to store: its mode, its hash and the hint shown of it. */
interface NewKey {
  mode: KeyMode;
  hash: Buffer;
  hint: string;
}

/** Local mode's first key to issue, and how to show it (see {@link issueFirstKey}). */
interface FirstKey {
  name: string;
  key: NewKey;
  now: Date;
  show: (created: boolean) => void;
}

/** A change of name and/or settings (see {@link updateIntegration}). */
interface IntegrationChange {
  name?: string;
  settings?: (stored: IntegrationSettingsInput) => IntegrationSettingsInput;
  now: Date;
}

/** Integrations and their API keys. */
export function createIntegrationStore(db: Db) {
  return {
    create: (input: { name: string; settings: IntegrationSettingsInput; now: Date }) =>
      createIntegration(db, input),
    get: (id: number) => getIntegration(db, id),
    list: () => listIntegrations(db),
    issueFirstKey: (input: FirstKey) => issueFirstKey(db, input),
    update: (id: number, change: IntegrationChange) => updateIntegration(db, id, change),
    setStatus: (id: number, status: IntegrationStatus, now: Date) => setStatus(db, id, status, now),
    createKey: (input: NewKey & { integrationId: number; now: Date }) => createKey(db, input),
    listKeys: (integrationId: number) => listKeys(db, integrationId),
    listKeysOf: (integrationIds: readonly number[]) => listKeysOf(db, integrationIds),
    markKeyUsed: (id: number, at: Date) => markKeyUsed(db, id, at),
    revokeKey: (id: number, now: Date) => revokeKey(db, id, now),
    findPrincipal: (hash: Buffer) => findPrincipal(db, hash),
  };
}

export type IntegrationStore = ReturnType<typeof createIntegrationStore>;

/** Creates an integration. */
async function createIntegration(
  db: Db,
  input: { name: string; settings: IntegrationSettingsInput; now: Date },
): Promise<IntegrationRecord> {
  const { rows } = await db.query<IntegrationRow>(
    `INSERT INTO integrations (name, settings, created_at, updated_at) VALUES ($1, $2, $3, $3) RETURNING *`,
    [input.name, JSON.stringify(input.settings), input.now],
  );
  return toIntegration(rows[0]!);
}

/** One integration, or null. */
async function getIntegration(db: Db, id: number): Promise<IntegrationRecord | null> {
  const { rows } = await db.query<IntegrationRow>('SELECT * FROM integrations WHERE id = $1', [id]);
  return rows[0] ? toIntegration(rows[0]) : null;
}

/** Every integration, oldest first. */
async function listIntegrations(db: Db): Promise<IntegrationRecord[]> {
  const { rows } = await db.query<IntegrationRow>('SELECT * FROM integrations ORDER BY id');
  return rows.map(toIntegration);
}

/**
 * Local mode's first key, issued once per database: creates the integration `name` with a key
 * when there is no integration yet, or adds a key to the integration `name` when no first key
 * was ever shown (an earlier start stopped before showing it). `show` runs inside the
 * transaction, before the commit, so a key is stored only if it was shown, together with the
 * fact that it was; several processes starting at once serialise on an advisory lock. Returns
 * the integration, or null when a first key was shown already or the store was set up otherwise.
 */
function issueFirstKey(db: Db, input: FirstKey): Promise<IntegrationRecord | null> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [FIRST_INTEGRATION_LOCK_KEY]);
    const { rows: shown } = await tx.query('SELECT 1 FROM service_settings WHERE key = $1', [
      FIRST_KEY_SHOWN_SETTING,
    ]);
    if (shown.length > 0) return null;
    const { rows: any } = await tx.query('SELECT 1 FROM integrations LIMIT 1');
    const created = any.length === 0;
    const { rows } = created
      ? await tx.query<IntegrationRow>(
          'INSERT INTO integrations (name, created_at, updated_at) VALUES ($1, $2, $2) RETURNING *',
          [input.name, input.now],
        )
      : await tx.query<IntegrationRow>('SELECT * FROM integrations WHERE name = $1 ORDER BY id LIMIT 1', [
          input.name,
        ]);
    const integration = rows[0] ? toIntegration(rows[0]) : null;
    let keyId: string | null = null;
    if (integration) {
      const { rows } = await tx.query<{ id: string }>(
        `INSERT INTO api_keys (integration_id, mode, key_hash, key_hint, created_at)
         VALUES ($1, $2, $3, $4, $5) RETURNING id`,
        [integration.id, input.key.mode, input.key.hash, input.key.hint, input.now],
      );
      keyId = rows[0]!.id;
    }
    // Recorded also when there is nothing to show (integrations made otherwise), so that an
    // integration named later like the local one never receives a key by surprise.
    await tx.query('INSERT INTO service_settings (key, value) VALUES ($1, $2)', [
      FIRST_KEY_SHOWN_SETTING,
      keyId ?? 'none',
    ]);
    if (integration) input.show(created);
    return integration;
  });
}

/**
 * Changes name and/or settings; `update` receives the stored settings and returns the new ones,
 * so the read-modify-write happens under a row lock.
 */
function updateIntegration(db: Db, id: number, change: IntegrationChange): Promise<IntegrationRecord | null> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<IntegrationRow>('SELECT * FROM integrations WHERE id = $1 FOR UPDATE', [
      id,
    ]);
    const current = rows[0];
    if (!current) return null;
    const settings = change.settings ? change.settings(current.settings) : current.settings;
    const updated = await tx.query<IntegrationRow>(
      `UPDATE integrations SET name = $2, settings = $3, updated_at = $4 WHERE id = $1 RETURNING *`,
      [id, change.name ?? current.name, JSON.stringify(settings), change.now],
    );
    await notifyAuthChanged(tx);
    return toIntegration(updated.rows[0]!);
  });
}

/** Suspends or resumes an integration. */
function setStatus(
  db: Db,
  id: number,
  status: IntegrationStatus,
  now: Date,
): Promise<IntegrationRecord | null> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<IntegrationRow>(
      'UPDATE integrations SET status = $2, updated_at = $3 WHERE id = $1 RETURNING *',
      [id, status, now],
    );
    await notifyAuthChanged(tx);
    return rows[0] ? toIntegration(rows[0]) : null;
  });
}

/** Stores a new key's hash. */
async function createKey(
  db: Db,
  input: NewKey & { integrationId: number; now: Date },
): Promise<ApiKeyRecord> {
  const { rows } = await db.query<ApiKeyRow>(
    `INSERT INTO api_keys (integration_id, mode, key_hash, key_hint, created_at)
     VALUES ($1, $2, $3, $4, $5) RETURNING *`,
    [input.integrationId, input.mode, input.hash, input.hint, input.now],
  );
  return toApiKey(rows[0]!);
}

/** The keys of an integration, without secrets. */
async function listKeys(db: Db, integrationId: number): Promise<ApiKeyRecord[]> {
  const { rows } = await db.query<ApiKeyRow>('SELECT * FROM api_keys WHERE integration_id = $1 ORDER BY id', [
    integrationId,
  ]);
  return rows.map(toApiKey);
}

/** The keys of several integrations, without secrets, by integration then id. */
async function listKeysOf(db: Db, integrationIds: readonly number[]): Promise<ApiKeyRecord[]> {
  const { rows } = await db.query<ApiKeyRow>(
    'SELECT * FROM api_keys WHERE integration_id = ANY($1::bigint[]) ORDER BY integration_id, id',
    [integrationIds],
  );
  return rows.map(toApiKey);
}

/**
 * Records a key used at `at` (never moving its last use back). Not an auth change: no process
 * needs to drop its cached keys for it.
 */
async function markKeyUsed(db: Db, id: number, at: Date): Promise<void> {
  await db.query(
    'UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)',
    [id, at],
  );
}

/** Revokes a key (idempotent: the first revocation time is kept). */
function revokeKey(db: Db, id: number, now: Date): Promise<ApiKeyRecord | null> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<ApiKeyRow>(
      'UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1 RETURNING *',
      [id, now],
    );
    await notifyAuthChanged(tx);
    return rows[0] ? toApiKey(rows[0]) : null;
  });
}

/** The columns {@link toKeyPrincipal} maps, over `api_keys k JOIN integrations i`. */
export const KEY_PRINCIPAL_COLUMNS =
  'k.id AS key_id, k.mode, k.revoked_at, i.id AS integration_id, i.status, i.settings';

/** A row of {@link KEY_PRINCIPAL_COLUMNS}. */
export type KeyPrincipalRow = {
  key_id: string;
  mode: KeyMode;
  revoked_at: Date | null;
  integration_id: string;
  status: IntegrationStatus;
  settings: IntegrationSettingsInput;
};

/** Resolves a key hash to its integration, or null when no such key exists. */
async function findPrincipal(db: Db, hash: Buffer): Promise<KeyPrincipal | null> {
  const { rows } = await db.query<KeyPrincipalRow>(
    `SELECT ${KEY_PRINCIPAL_COLUMNS}
       FROM api_keys k JOIN integrations i ON i.id = k.integration_id
      WHERE k.key_hash = $1`,
    [hash],
  );
  return rows[0] ? toKeyPrincipal(rows[0]) : null;
}

/** Maps a row of {@link KEY_PRINCIPAL_COLUMNS}. */
export function toKeyPrincipal(row: KeyPrincipalRow): KeyPrincipal {
  return {
    keyId: Number(row.key_id),
    mode: row.mode,
    revoked: row.revoked_at !== null,
    integrationId: Number(row.integration_id),
    integrationStatus: row.status,
    settings: row.settings,
  };
}

function notifyAuthChanged(tx: Sql) {
  return tx.query('SELECT pg_notify($1, $2)', [AUTH_CHANGED_CHANNEL, 'changed']);
}

type IntegrationRow = {
  id: string;
  name: string;
  status: IntegrationStatus;
  settings: IntegrationSettingsInput;
  created_at: Date;
  updated_at: Date;
};

type ApiKeyRow = {
  id: string;
  integration_id: string;
  mode: KeyMode;
  key_hint: string;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
};

function toIntegration(row: IntegrationRow): IntegrationRecord {
  return {
    id: Number(row.id),
    name: row.name,
    status: row.status,
    settings: row.settings,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toApiKey(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: Number(row.id),
    integrationId: Number(row.integration_id),
    mode: row.mode,
    hint: row.key_hint,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
  };
}
