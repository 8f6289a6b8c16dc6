import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { toAppError } from '../errors.ts';
import { pageData } from './layout.ts';

/** What an error page says: its title and message in words, and where to go back to (unless the default). */
export interface ErrorContent {
  title: string;
  message: string;
  back?: { href: string; label: string };
}

/** Shows an error page: its content, with the request's id. */
export type ErrorPage = (
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  content: ErrorContent,
) => unknown;

/**
 * The console answers its errors with pages, not the API's JSON envelope: the same mapping of
 * errors to codes and statuses (src/http/errors.ts), a message in words and the request id to
 * quote to support. Internal failures are logged and never shown. The operator's console shows
 * them its own way (`show`, and what it says of an internal failure and a missing page).
 */
export function registerConsoleErrors(
  app: FastifyInstance,
  show: ErrorPage = errorPage,
  words = {
    internal: 'Something went wrong on our side. Try again; if it keeps happening, contact support.',
    notFound: 'There is no such page in the console.',
  },
) {
  app.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error, request);
    if (appError.code === 'MH_090' || appError.code === 'MH_091') {
      request.log.error({ err: appError.cause ?? error, code: appError.code }, 'console request failed');
    }
    for (const [name, value] of Object.entries(appError.headers)) reply.header(name, value);
    const message = appError.code === 'MH_090' ? words.internal : appError.message;
    // A limit reached (MH_004) is no fault: the page says how long to wait.
    const title = appError.code === 'MH_004' ? 'Wait a moment' : 'Something went wrong';
    return show(request, reply, appError.status, { title, message });
  });
  app.setNotFoundHandler((request, reply) =>
    show(request, reply, 404, { title: 'Not found', message: words.notFound }),
  );
}

/** An error page with the request id, signed in or not. */
export function errorPage(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  content: ErrorContent,
) {
  const caller = (request as Partial<Pick<FastifyRequest, 'consoleCaller'>>).consoleCaller ?? null;
  return reply.code(status).view('error', pageData(caller, { ...content, requestId: request.id }));
}
