import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../../domain/clock.ts';
import type { ConsoleSessionStore } from '../../../store/console-sessions.ts';
import { hashToken, isAutoRefresh } from '../session.ts';

/*
 * Operator sessions, kept like the integrator's (src/http/console/session.ts) in the console's
 * session table as sessions of their own kind: the admin token is sent once, in the sign-in form's
 * body; the browser then holds a random token in a cookie of its own, sent only to the operator's
 * pages, and the database only the token's hash with a MAC binding it to the admin token: an HMAC
 * of the admin token's hash and the token hash, so that changing ADMIN_TOKEN ends every operator
 * session. The MAC's key is derived from ENCRYPTION_KEY, not the admin token itself: a reader of
 * the database alone cannot test guesses of the admin token against it. Shorter than an
 * integrator's: the admin token can do anything.
 */

/** The cookie holding an operator's session token, sent only to the operator's pages. */
export const OPERATOR_COOKIE = 'tr_operator';
const COOKIE_PATH = '/dashboard/operator';
/** An operator's session ends this long after it was last used... */
const IDLE_MS = 30 * 60_000;
/** ...and this long after it was opened, however much it is used. */
const LIFETIME_MS = 8 * 3600_000;
/** Its last use is recorded at most this often (the keeper's page refreshes itself). */
const TOUCH_EVERY_MS = 60_000;

/** Why an operator's session is not there any more, as the sign-in page explains it. */
export type OperatorEndedReason = 'expired' | 'token-changed' | 'signed-out';

/** Opens, checks and ends operator sessions. */
export function createOperatorSessions(deps: {
  sessions: ConsoleSessionStore;
  clock: Clock;
  adminToken: string;
  /** The MAC's key: ENCRYPTION_KEY's subkey for operator sessions (SecretBox's `deriveKey`). */
  macKey: Buffer;
  /** Secure cookies whatever the request's protocol (production, behind a TLS front). */
  secureCookies: boolean;
}) {
  const cookieOptions = (request: FastifyRequest) => ({
    path: COOKIE_PATH,
    httpOnly: true,
    sameSite: 'strict' as const,
    secure: deps.secureCookies || request.protocol === 'https',
  });
  const adminTokenHash = createHash('sha256').update(deps.adminToken, 'utf8').digest();
  const macOf = (tokenHash: Buffer) =>
    createHmac('sha256', deps.macKey).update(adminTokenHash).update(tokenHash).digest();

  return {
    /** Opens a session for a caller who presented the admin token, and sets its cookie. */
    async open(request: FastifyRequest, reply: FastifyReply) {
      const token = randomBytes(32).toString('base64url');
      const tokenHash = hashToken(token);
      const now = deps.clock.now();
      await deps.sessions.openOperator({
        tokenHash,
        adminTokenMac: macOf(tokenHash),
        now,
        expiresAt: new Date(now.getTime() + IDLE_MS),
      });
      reply.setCookie(OPERATOR_COOKIE, token, cookieOptions(request));
    },

    /**
     * Whether the request comes from an operator's session, or why not: no cookie (undefined
     * reason), a session that ended, or one opened with another admin token (ended here).
     */
    async resolve(
      request: FastifyRequest,
    ): Promise<{ signedIn: true } | { ended: OperatorEndedReason | undefined }> {
      const token = request.cookies[OPERATOR_COOKIE];
      if (!token) return { ended: undefined };
      const tokenHash = hashToken(token);
      const now = deps.clock.now();
      const session = await deps.sessions.findOperator(tokenHash, now);
      if (!session) return { ended: 'expired' };
      if (!timingSafeEqual(session.adminTokenMac, macOf(tokenHash))) {
        await deps.sessions.closeOperator(tokenHash);
        return { ended: 'token-changed' };
      }
      // A page refreshing itself is no use of the session: an unattended tab lets it lapse.
      if (!isAutoRefresh(request) && now.getTime() - session.lastSeenAt.getTime() >= TOUCH_EVERY_MS) {
        const ends = Math.min(session.createdAt.getTime() + LIFETIME_MS, now.getTime() + IDLE_MS);
        await deps.sessions.touch(tokenHash, now, new Date(ends));
      }
      return { signedIn: true };
    },

    /** Ends the request's operator session, if any, and clears its cookie. */
    async close(request: FastifyRequest, reply: FastifyReply) {
      const token = request.cookies[OPERATOR_COOKIE];
      if (token) await deps.sessions.closeOperator(hashToken(token));
      reply.clearCookie(OPERATOR_COOKIE, cookieOptions(request));
    },
  };
}

export type OperatorSessions = ReturnType<typeof createOperatorSessions>;

/** Where a signed-out operator goes: the operator's sign-in page, saying why, and where to come back to. */
export function operatorSignInLocation(reason: OperatorEndedReason | undefined, next?: string): string {
  const query = new URLSearchParams();
  if (reason) query.set('ended', reason);
  if (next && isOperatorPath(next)) query.set('next', next);
  const text = query.toString();
  return `/dashboard/operator/sign-in${text ? `?${text}` : ''}`;
}

/** A path of the operator's own pages (never another site, never a protocol-relative URL). */
export function isOperatorPath(path: string): boolean {
  return /^\/dashboard\/operator(\/[A-Za-z0-9_\-./?=&%]*)?$/.test(path) && !path.includes('//');
}
