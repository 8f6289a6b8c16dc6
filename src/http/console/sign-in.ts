import type { FastifyInstance, FastifyReply } from 'fastify';
import { isAppError } from '../../domain/errors.ts';
import type { AuthContext } from '../auth.ts';
import { formField as field } from './form.ts';
import { pageData } from './layout.ts';
import {
  type ConsoleSessions,
  type EndedReason,
  isConsolePath,
  signInLimit,
  signInLocation,
} from './session.ts';

/** Why the sign-in page is shown again, in words. */
const ENDED_MESSAGES: Record<EndedReason, string> = {
  expired: 'Your session ended. Sign in again.',
  revoked:
    'The API key this session was opened with has been revoked, so the session ended. Sign in with an active key.',
  suspended: 'This integration is suspended, so the session ended. Contact support to restore access.',
  'signed-out': 'You are signed out.',
};

const HOME = '/dashboard/transfers';

/**
 * `GET /dashboard/sign-in`, `POST /dashboard/sign-in` (the API key in the form's body, checked as
 * the API checks it, opens a session) and `POST /dashboard/sign-out`.
 */
export async function signInPages(
  app: FastifyInstance,
  deps: {
    sessions: ConsoleSessions;
    authenticateKey(key: string): Promise<AuthContext>;
    signInsPerMinute: number;
  },
) {
  const show = (
    reply: FastifyReply,
    status: number,
    input: { next: string; error?: string; notice?: string },
  ) => reply.code(status).view('sign-in', pageData(null, { title: 'Sign in', ...input }));

  app.get('/sign-in', async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const next = typeof query.next === 'string' && isConsolePath(query.next) ? query.next : HOME;
    const found = await deps.sessions.resolve(request);
    if ('auth' in found) return reply.redirect(next, 303);
    const ended =
      typeof query.ended === 'string' && Object.hasOwn(ENDED_MESSAGES, query.ended)
        ? ENDED_MESSAGES[query.ended as EndedReason]
        : undefined;
    return show(reply, 200, { next, ...(ended ? { notice: ended } : {}) });
  });

  app.post('/sign-in', { config: signInLimit(deps.signInsPerMinute) }, async (request, reply) => {
    const key = field(request.body, 'apiKey').trim();
    const nextField = field(request.body, 'next');
    const next = isConsolePath(nextField) ? nextField : HOME;
    if (key === '') return show(reply, 400, { next, error: 'Enter an API key.' });
    let auth: AuthContext;
    try {
      auth = await deps.authenticateKey(key);
    } catch (error) {
      if (!isAppError(error)) throw error;
      return show(reply, error.status, { next, error: error.message });
    }
    // A session already open in this browser (another key's, perhaps) ends first.
    await deps.sessions.close(request, reply);
    await deps.sessions.open(request, reply, auth);
    return reply.redirect(next, 303);
  });

  app.post('/sign-out', async (request, reply) => {
    await deps.sessions.close(request, reply);
    return reply.redirect(signInLocation('signed-out'), 303);
  });
}
