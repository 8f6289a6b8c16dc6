import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hashApiKey, type KeyMode, parseApiKey } from '../domain/api-keys.ts';
import type { Clock } from '../domain/clock.ts';
import { AppError } from '../domain/errors.ts';
import { type IntegrationSettings, resolveSettings } from '../domain/integration.ts';
import { AUTH_CHANGED_CHANNEL, type IntegrationStore, type KeyPrincipal } from '../store/integrations.ts';

/** Who is calling: the key, its integration and the mode that separates test from live objects. */
export interface AuthContext {
  apiKeyId: number;
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

/**
 * Resolves API keys to principals with a short cache, so the hot path does not read the
 * database on every request. Every process drops its cache when any key or integration changes
 * (PostgreSQL NOTIFY), so revocation and suspension take effect at once.
 */
export function createAuthenticator(deps: { integrations: IntegrationStore; clock: Clock; cacheMs: number }) {
  const cache = new Map<string, { principal: KeyPrincipal; expiresAt: number }>();
  const MAX_CACHED = 10_000;

  // Keyed by the presented key itself (memory only), so a cached key costs no hashing.
  async function principalFor(key: string): Promise<KeyPrincipal | null> {
    const now = deps.clock.now().getTime();
    const cached = cache.get(key);
    if (cached && cached.expiresAt > now) return cached.principal;
    const principal = await deps.integrations.findPrincipal(hashApiKey(key));
    if (principal && deps.cacheMs > 0) {
      if (cache.size >= MAX_CACHED) cache.clear();
      cache.set(key, { principal, expiresAt: now + deps.cacheMs });
    }
    return principal;
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
      const mode = parseApiKey(key);
      const principal = mode ? await principalFor(key) : null;
      if (!principal || principal.mode !== mode) {
        throw new AppError(
          'MH_001',
          'Invalid API key. Check that the key is complete and belongs to this environment.',
        );
      }
      if (principal.revoked)
        throw new AppError('MH_002', 'This API key has been revoked. Use an active key.');
      if (principal.integrationStatus === 'suspended') {
        throw new AppError('MH_003', 'This integration is suspended. Contact support to restore access.');
      }
      return {
        apiKeyId: principal.keyId,
        integrationId: principal.integrationId,
        mode: principal.mode,
        isTest: principal.mode === 'test',
        settings: resolveSettings(principal.settings),
      };
    },
    /** Forgets every cached principal. */
    invalidate() {
      cache.clear();
    },
  };
}

export type Authenticator = ReturnType<typeof createAuthenticator>;

/** Keeps the authenticator's cache in step with changes made by any process. */
export async function subscribeToAuthChanges(
  app: FastifyInstance,
  listen: (channel: string, onNotify: () => void) => Promise<() => Promise<void>>,
  authenticator: Authenticator,
) {
  const unlisten = await listen(AUTH_CHANGED_CHANNEL, () => authenticator.invalidate());
  app.addHook('onClose', async () => unlisten());
}
