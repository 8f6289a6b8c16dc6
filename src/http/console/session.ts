import { createHash, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../domain/clock.ts';
import { isAppError } from '../../domain/errors.ts';
import type { ConsoleSessionStore } from '../../store/console-sessions.ts';
import { type AuthContext, admitPrincipal } from '../auth.ts';
import { isRefresh } from './live.ts';

/*
 * Console sessions, as Stripe's dashboard keeps them: the API key is sent once, in the sign-in
 * form's body; the browser then holds only a random token in an HttpOnly, SameSite=Strict cookie,
 * and the database only the token's hash. Every request re-checks the key the session was opened
 * with, exactly as the API checks a presented key (src/http/auth.ts).
 */

/** The cookie holding the session token, sent only to the console's paths. */
export const SESSION_COOKIE = 'tr_console';
const COOKIE_PATH = '/dashboard';
/** A session ends this long after it was last used... */
const IDLE_MS = 2 * 3600_000;
/** ...and this long after it was opened, however much it is used. */
const LIFETIME_MS = 12 * 3600_000;
/** Its last use is recorded at most this often (live pages poll every 2 s). */
const TOUCH_EVERY_MS = 60_000;

/** Why a session is not there any more, as the sign-in page explains it. */
export type EndedReason = 'expired' | 'revoked' | 'suspended' | 'signed-out';

/** The signed-in caller of a console request: the key's context and its integration's name. */
export interface ConsoleCaller {
  auth: AuthContext;
  integrationName: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    consoleCaller: ConsoleCaller;
  }
}

/** A session token as the database keeps it: its SHA-256. */
export const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest();

/** Opens, finds and ends console sessions. */
export function createConsoleSessions(deps: {
  sessions: ConsoleSessionStore;
  clock: Clock;
  /** Secure cookies whatever the request's protocol (production, behind a TLS front). */
  secureCookies: boolean;
}) {
  const cookieOptions = (request: FastifyRequest) => ({
    path: COOKIE_PATH,
    httpOnly: true,
    sameSite: 'strict' as const,
    secure: deps.secureCookies || request.protocol === 'https',
  });

  return {
    /** Opens a session for an authenticated key and sets its cookie. */
    async open(request: FastifyRequest, reply: FastifyReply, auth: AuthContext) {
      const token = randomBytes(32).toString('base64url');
      const now = deps.clock.now();
      await deps.sessions.open({
        tokenHash: hashToken(token),
        apiKeyId: auth.apiKeyId,
        now,
        expiresAt: new Date(now.getTime() + IDLE_MS),
      });
      reply.setCookie(SESSION_COOKIE, token, cookieOptions(request));
    },

    /**
     * The caller of a request, or why it has none: no cookie (undefined reason), a session that
     * ended, or a key that may no longer be used (whose session is ended here).
     */
    async resolve(request: FastifyRequest): Promise<ConsoleCaller | { ended: EndedReason | undefined }> {
      const token = request.cookies[SESSION_COOKIE];
      if (!token) return { ended: undefined };
      const tokenHash = hashToken(token);
      const now = deps.clock.now();
      const session = await deps.sessions.find(tokenHash, now);
      if (!session) return { ended: 'expired' };
      let auth: AuthContext;
      try {
        auth = admitPrincipal(session.principal);
      } catch (error) {
        if (!isAppError(error)) throw error;
        await deps.sessions.close(tokenHash);
        return { ended: error.code === 'MH_003' ? 'suspended' : 'revoked' };
      }
      // A page refreshing itself is no use of the session: an unattended tab lets it lapse.
      if (!isAutoRefresh(request) && now.getTime() - session.lastSeenAt.getTime() >= TOUCH_EVERY_MS) {
        const ends = Math.min(session.createdAt.getTime() + LIFETIME_MS, now.getTime() + IDLE_MS);
        await deps.sessions.touch(tokenHash, now, new Date(ends));
      }
      return { auth, integrationName: session.integrationName };
    },

    /** Ends the request's session, if any, and clears its cookie. */
    async close(request: FastifyRequest, reply: FastifyReply) {
      const token = request.cookies[SESSION_COOKIE];
      if (token) await deps.sessions.close(hashToken(token));
      reply.clearCookie(SESSION_COOKIE, cookieOptions(request));
    },
  };
}

export type ConsoleSessions = ReturnType<typeof createConsoleSessions>;

/** Sign-in attempts allowed per address a minute unless the service says otherwise. */
export const DEFAULT_SIGN_INS_PER_MINUTE = 10;

/** A sign-in form's route limit: `perMinute` attempts per address (the console registers the plugin). */
export const signInLimit = (perMinute: number) => ({ rateLimit: { max: perMinute, timeWindow: 60_000 } });

/** Whether htmx is refreshing a live part of a page on its own (its actions are POSTs). */
export const isAutoRefresh = (request: FastifyRequest) => request.method === 'GET' && isRefresh(request);

/**
 * Whether a state-changing request comes from the console's own pages: its `Origin` (or, when a
 * browser sends none, its `Referer`) names this host. With the SameSite=Strict cookie this keeps
 * other sites from signing a browser in or out or acting in its session.
 */
export function isSameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin ?? request.headers.referer;
  if (!origin) return false;
  try {
    const from = new URL(origin);
    // Read through URL too, so a default port (`:443` after https) compares equal to none.
    return from.host === new URL(`${from.protocol}//${request.host}`).host;
  } catch {
    return false;
  }
}

/** Where a signed-out caller goes: the sign-in page, saying why, and where to come back to. */
export function signInLocation(reason: EndedReason | undefined, next?: string): string {
  const query = new URLSearchParams();
  if (reason) query.set('ended', reason);
  if (next && isConsolePath(next)) query.set('next', next);
  const text = query.toString();
  return `/dashboard/sign-in${text ? `?${text}` : ''}`;
}

/** A path of the console's own pages (never another site, never a protocol-relative URL). */
export function isConsolePath(path: string): boolean {
  return /^\/dashboard(\/[A-Za-z0-9_\-./?=&%]*)?$/.test(path) && !path.includes('//');
}
