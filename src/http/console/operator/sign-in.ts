import type { FastifyInstance, FastifyReply } from 'fastify';
import { isAdminToken } from '../../admin-auth.ts';
import { formField as field } from '../form.ts';
import { signInLimit } from '../session.ts';
import { OPERATOR_HOME, operatorPageData } from './layout.ts';
import {
  isOperatorPath,
  type OperatorEndedReason,
  type OperatorSessions,
  operatorSignInLocation,
} from './session.ts';

/** Why the operator's sign-in page is shown again, in words. */
const ENDED_MESSAGES: Record<OperatorEndedReason, string> = {
  expired: 'Your operator session ended. Sign in again.',
  'token-changed':
    'The admin token has changed since you signed in, so the session ended. Sign in with the new one.',
  'signed-out': 'You are signed out of the operator’s console.',
};

/** What a wrong token is told: which token is meant, and nothing of the one sent. */
const WRONG_TOKEN =
  'That is not this service’s admin token. Use the value of ADMIN_TOKEN (in local mode, the file admin-token in DATA_DIR).';

/**
 * `GET /dashboard/operator/sign-in`, `POST /dashboard/operator/sign-in` (the admin token in the
 * form's body, checked as the admin API checks it, opens an operator's session) and
 * `POST /dashboard/operator/sign-out`.
 */
export async function operatorSignInPages(
  app: FastifyInstance,
  deps: { sessions: OperatorSessions; adminToken: string; signInsPerMinute: number },
) {
  const show = (
    reply: FastifyReply,
    status: number,
    input: { next: string; error?: string; notice?: string },
  ) =>
    reply
      .code(status)
      .view('operator/sign-in', operatorPageData(false, { title: 'Operator sign-in', ...input }));

  app.get('/sign-in', async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const next = typeof query.next === 'string' && isOperatorPath(query.next) ? query.next : OPERATOR_HOME;
    const found = await deps.sessions.resolve(request);
    if ('signedIn' in found) return reply.redirect(next, 303);
    const ended =
      typeof query.ended === 'string' && Object.hasOwn(ENDED_MESSAGES, query.ended)
        ? ENDED_MESSAGES[query.ended as OperatorEndedReason]
        : undefined;
    return show(reply, 200, { next, ...(ended ? { notice: ended } : {}) });
  });

  app.post('/sign-in', { config: signInLimit(deps.signInsPerMinute) }, async (request, reply) => {
    const token = field(request.body, 'adminToken').trim();
    const nextField = field(request.body, 'next');
    const next = isOperatorPath(nextField) ? nextField : OPERATOR_HOME;
    if (token === '') return show(reply, 400, { next, error: 'Enter the admin token.' });
    if (!isAdminToken(token, deps.adminToken)) return show(reply, 401, { next, error: WRONG_TOKEN });
    // An operator session already open in this browser ends first.
    await deps.sessions.close(request, reply);
    await deps.sessions.open(request, reply);
    return reply.redirect(next, 303);
  });

  app.post('/sign-out', async (request, reply) => {
    await deps.sessions.close(request, reply);
    return reply.redirect(operatorSignInLocation('signed-out'), 303);
  });
}
