import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { toAppError } from '../../errors.ts';
import { operatorPageData } from './layout.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Whether the request comes from an operator's session (its error pages then show the navigation). */
    operatorSignedIn: boolean;
  }
}

/** The operator's error pages: the console's mapping of errors, under the operator's header. */
export function registerOperatorErrors(app: FastifyInstance) {
  app.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error, request);
    if (appError.code === 'MH_090' || appError.code === 'MH_091') {
      request.log.error({ err: appError.cause ?? error, code: appError.code }, 'console request failed');
    }
    for (const [name, value] of Object.entries(appError.headers)) reply.header(name, value);
    const message =
      appError.code === 'MH_090'
        ? 'Something went wrong on our side. Try again; if it keeps happening, look for this request id in the logs.'
        : appError.message;
    return operatorErrorPage(request, reply, appError.status, { title: 'Something went wrong', message });
  });
  app.setNotFoundHandler((request, reply) =>
    operatorErrorPage(request, reply, 404, {
      title: 'Not found',
      message: 'There is no such page in the operator’s console.',
    }),
  );
}

/** An error page of the operator's console, with the request id. */
export function operatorErrorPage(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  content: { title: string; message: string },
) {
  return reply
    .code(status)
    .view(
      'operator/error',
      operatorPageData(request.operatorSignedIn, { ...content, requestId: request.id }),
    );
}
