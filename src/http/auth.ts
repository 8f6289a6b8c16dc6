import type { FastifyRequest } from 'fastify';
import { hashApiKey, type KeyMode, LIVE_KEY_ON_LOCAL_CHAIN, parseApiKey } from '../domain/api-keys.ts';
import type { Clock } from '../domain/clock.ts';
import { AppError } from '../domain/errors.ts';
import { type IntegrationSettings, type Owner, resolveSettings } from '../domain/integration.ts';
import type { Cluster } from '../platform/platform.ts';
import { AUTH_CHANGED_CHANNEL } from '../store/channels.ts';
import type { Db } from '../store/db.ts';
import type { IntegrationStore, KeyPrincipal } from '../store/integrations.ts';
import { createNotifiedCache } from '../store/notified-cache.ts';

/** Who is calling: the key, its integration and the mode that separates test from live objects. */
export interface AuthContext {
  apiKeyId: number;
  /** Whose objects this caller sees: its integration, in its key's mode. */
  owner: Owner;
  integrationId: number;
  mode: KeyMode;
  isTest: boolean;
  settings: IntegrationSettings;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext;
  }
}

/** The API key a request presents, from `x-api-key` or `Authorization: Bearer`. */
function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  if (typeof header === 'string' && header !== '') return header.trim();
  const authorization = request.headers.authorization;
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) return match[1];
  }
  return undefined;
}

/** The caller's context for a key's principal. */
function contextOf(principal: KeyPrincipal): AuthContext {
  return {
    apiKeyId: principal.keyId,
    owner: { integrationId: principal.integrationId, mode: principal.mode },
    integrationId: principal.integrationId,
    mode: principal.mode,
    isTest: principal.mode === 'test',
    settings: resolveSettings(principal.settings),
  };
}

/** Refuses a key that may no longer be used: MH_002 when revoked, MH_003 when its integration is suspended. */
function assertUsable(principal: Pick<KeyPrincipal, 'revoked' | 'integrationStatus'>): void {
  if (principal.revoked) throw new AppError('MH_002', 'This API key has been revoked. Use an active key.');
  if (principal.integrationStatus === 'suspended') {
    throw new AppError('MH_003', 'This integration is suspended. Contact support to restore access.');
  }
}

/**
 * The context of a key already identified (a console session names its key): the same checks as
 * a presented key's, so a revoked key or a suspended integration is refused alike.
 */
export function admitPrincipal(principal: KeyPrincipal): AuthContext {
  assertUsable(principal);
  return contextOf(principal);
}

/** A key's use is written at most this often per process, so the hot path writes at most once a minute per key. */
const USE_RECORDED_EVERY_MS = 60_000;

/**
 * Resolves API keys to principals with a short cache, so the hot path does not read the
 * database on every request. Every process drops its cache when any key or integration changes
 * (PostgreSQL NOTIFY), so revocation and suspension take effect at once; while notifications are
 * interrupted the cache is bypassed. A key admitted is recorded used (`lastUsedAt`, to the minute).
 */
export function createAuthenticator(deps: {
  integrations: IntegrationStore;
  clock: Clock;
  cacheMs: number;
  log?: { warn(obj: object, msg: string): void };
}) {
  // Keyed by the presented key itself (memory only), so a cached key costs no hashing; the caller's
  // context is resolved once per load, not per request.
  const cache = createNotifiedCache<string, { principal: KeyPrincipal; context: AuthContext }>({
    ttlMs: deps.cacheMs,
    maxEntries: 10_000,
    now: () => deps.clock.now().getTime(),
  });

  // When this process last recorded each key's use (its key ids: bounded by the keys there are).
  const usesRecorded = new Map<number, number>();

  /** Records a key used now, unless this process did so within the minute; never fails the request. */
  async function recordUse(keyId: number) {
    const now = deps.clock.now();
    const last = usesRecorded.get(keyId);
    if (last !== undefined && now.getTime() - last < USE_RECORDED_EVERY_MS) return;
    usesRecorded.set(keyId, now.getTime());
    try {
      await deps.integrations.markKeyUsed(keyId, now);
    } catch (error) {
      deps.log?.warn({ err: error, apiKeyId: keyId }, 'cannot record that an API key was used');
    }
  }

  async function resolve(key: string) {
    const principal = await deps.integrations.findPrincipal(hashApiKey(key));
    if (!principal) return null;
    return { principal, context: contextOf(principal) };
  }

  /** The context of a key as presented (API header or console sign-in), or MH_001, MH_002 or MH_003. */
  async function authenticateKey(key: string): Promise<AuthContext> {
    const mode = parseApiKey(key);
    const found = mode ? await cache.read(key, () => resolve(key)) : null;
    const principal = found?.principal;
    if (!found || !principal || principal.mode !== mode) {
      throw new AppError(
        'MH_001',
        'Invalid API key. Check that the key is complete and belongs to this environment.',
      );
    }
    assertUsable(principal);
    await recordUse(principal.keyId);
    return found.context;
  }

  return {
    /** Authenticates a request or throws MH_001, MH_002 or MH_003. */
    async authenticate(request: FastifyRequest): Promise<AuthContext> {
      const key = presentedKey(request);
      if (!key) {
        throw new AppError(
          'MH_001',
          'Missing API key. Send it in the `x-api-key` header or as `Authorization: Bearer <key>`.',
        );
      }
      return authenticateKey(key);
    },
    authenticateKey,
    /** Follows key and integration changes of every process; resolves to a stop function. */
    follow: (db: Pick<Db, 'listen'>, log?: { warn(obj: object, msg: string): void }) =>
      cache.follow(db, AUTH_CHANGED_CHANNEL, () => 'all', log),
  };
}

/**
 * Warns, once per key in this process, when a live key is used on a local chain (cluster
 * localnet): its transfers count as live, yet move tokens of that chain alone.
 */
export function createLiveKeyNotice(cluster: Cluster) {
  const warned = new Set<number>();
  return (auth: AuthContext, log: { warn(obj: object, msg: string): void }) => {
    if (auth.mode !== 'live' || cluster !== 'localnet' || warned.has(auth.apiKeyId)) return;
    warned.add(auth.apiKeyId);
    log.warn({ apiKeyId: auth.apiKeyId, integrationId: auth.integrationId }, LIVE_KEY_ON_LOCAL_CHAIN);
  };
}
