import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ErrorContent, registerConsoleErrors } from '../errors.ts';
import { operatorPageData } from './layout.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Whether the request comes from an operator's session (its error pages then show the navigation). */
    operatorSignedIn: boolean;
  }
}

/** The operator's error pages: the console's mapping of errors, under the operator's header. */
export function registerOperatorErrors(app: FastifyInstance) {
  registerConsoleErrors(app, operatorErrorPage, {
    internal:
      'Something went wrong on our side. Try again; if it keeps happening, look for this request id in the logs.',
    notFound: 'There is no such page in the operator’s console.',
  });
}

/** An error page of the operator's console, with the request id. */
export function operatorErrorPage(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  content: ErrorContent,
) {
  return reply
    .code(status)
    .view(
      'operator/error',
      operatorPageData(request.operatorSignedIn, { ...content, requestId: request.id }),
    );
}
