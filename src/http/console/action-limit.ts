import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/errors.ts';

/** Console actions allowed a minute per API key (and for the operator) unless the service says otherwise. */
export const DEFAULT_ACTIONS_PER_MINUTE = 60;

/**
 * Limits the actions of a signed-in scope of the console: every POST (sending a test event,
 * resending, rotating a secret, issuing a key, claiming...) counts, `perMinute` a minute for each
 * `principal` (an integrator's API key, the operator), in this process, as the sign-in limit
 * counts. A page that runs away (a script, a stuck key) is refused with a 429 page saying how long
 * to wait, and sends nothing on. Reading pages and their live refresh (GETs) never count.
 * Registered after the scope's session check, which names the principal.
 */
export function limitActions(
  scope: FastifyInstance,
  perMinute: number,
  principal: (request: FastifyRequest) => string,
) {
  const limit = scope.rateLimit({
    max: perMinute,
    timeWindow: 60_000,
    keyGenerator: (request) => `console-action:${principal(request)}`,
    errorResponseBuilder: (_request, context) =>
      new AppError(
        'MH_004',
        `Too many actions: the console takes ${context.max} a minute. Nothing was done; try again in ${Math.ceil(context.ttl / 1000)} s.`,
      ),
  });
  scope.addHook('onRequest', async function (request, reply) {
    if (request.method === 'POST') await limit.call(this, request, reply);
  });
}
