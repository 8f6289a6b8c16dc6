import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { ChainError } from '../chain/errors.ts';
import { AppError, type ErrorCode, isAppError, type ProtocolStatus } from '../domain/errors.ts';
import { isDatabaseUnavailable } from '../store/db.ts';
import type { ErrorEnvelope } from './schemas/common.ts';

/**
 * Which error code a validation failure of a field gets. A plain code applies to every kind of
 * failure except a missing or mistyped value (always MH_016); a map picks by zod issue code
 * (`too_small`, `too_big`, `invalid_format`, `custom`, ...) with `default` for the rest.
 */
export type FieldErrorCodes = Record<string, ErrorCode | Partial<Record<string, ErrorCode>>>;

declare module 'fastify' {
  interface FastifyContextConfig {
    fieldErrors?: FieldErrorCodes;
  }
}

type ValidationIssue = {
  keyword: string;
  instancePath: string;
  message: string;
  params: Record<string, unknown>;
};

const CONTEXT_NAMES: Record<string, string> = {
  body: 'field',
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header',
};

/** The value a request carried at a path of one of its parts (body, query, path, headers). */
function valueAt(request: FastifyRequest, context: string | undefined, segments: string[]): unknown {
  const parts: Record<string, unknown> = {
    body: request.body,
    querystring: request.query,
    params: request.params,
    headers: request.headers,
  };
  let value = parts[context ?? 'body'];
  for (const segment of segments) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}

/**
 * The first issue, unless it is zod's safe-integer range check of a number that also breaks the
 * field's own bounds: `hops: 1e308` is told its limit of 10, not 2^53 - 1.
 */
function mostSpecific(issues: ValidationIssue[]): ValidationIssue {
  const first = issues[0]!;
  if (first.params.origin !== 'int' || !['too_big', 'too_small'].includes(first.keyword)) return first;
  return (
    issues.find(
      (other) =>
        other !== first && other.instancePath === first.instancePath && other.keyword === first.keyword,
    ) ?? first
  );
}

/** Turns the first schema violation into an AppError with the field's code and name. */
function fromValidation(
  request: FastifyRequest,
  issues: ValidationIssue[],
  context: string | undefined,
  fieldErrors: FieldErrorCodes = {},
): AppError {
  const issue = mostSpecific(issues);
  const segments = issue.instancePath.split('/').filter(Boolean);
  const where = CONTEXT_NAMES[context ?? 'body'] ?? 'field';

  if (issue.keyword === 'unrecognized_keys') {
    const keys = (issue.params.keys as string[] | undefined) ?? [];
    const param = [...segments, keys[0] ?? ''].filter(Boolean).join('.');
    return new AppError('MH_016', `Unknown ${where} \`${param}\`. Remove it or check its spelling.`, {
      param,
    });
  }

  const param = segments.length > 0 ? segments.join('.') : context === 'body' ? 'body' : undefined;
  const missing = segments.length > 0 && valueAt(request, context, segments) === undefined;
  if (missing) {
    return new AppError('MH_016', `Missing required ${where} \`${param}\`.`, { param });
  }
  if (param === 'body' && issue.keyword === 'invalid_type') {
    return new AppError('MH_016', 'The request body must be a JSON object.', { param });
  }

  const rule = param === undefined ? undefined : fieldErrors[segments[0] ?? ''];
  let code: ErrorCode = 'MH_016';
  if (typeof rule === 'string' && issue.keyword !== 'invalid_type') code = rule;
  else if (rule && typeof rule === 'object') code = rule[issue.keyword] ?? rule.default ?? 'MH_016';
  return new AppError(code, `Invalid ${where} \`${param ?? '?'}\`: ${issue.message}`, param ? { param } : {});
}

const FRAMEWORK_MESSAGES: Record<string, { status: 400 | ProtocolStatus; message: string }> = {
  FST_ERR_BAD_URL: {
    status: 400,
    message: 'The URL path is not valid percent-encoded UTF-8. Encode a literal "%" as "%25".',
  },
  FST_ERR_MAX_PARAM_LENGTH: { status: 414, message: 'A path segment is longer than any route accepts.' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    message: 'Unsupported Content-Type. Send the request body as JSON with `Content-Type: application/json`.',
  },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, message: 'The request body is too large.' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    status: 400,
    message: 'The Content-Length header does not match the body.',
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, message: 'The request body is empty but declared as JSON.' },
};

const PROTOCOL_STATUSES: ReadonlySet<number> = new Set<ProtocolStatus>([
  404, 405, 406, 408, 413, 414, 415, 417, 431,
]);

function isTimeout(error: unknown): boolean {
  return error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError');
}

/** Maps any error to an AppError: ours as they are, the framework's as MH_016, the rest as MH_090/MH_091. */
export function toAppError(error: unknown, request: FastifyRequest): AppError {
  if (isAppError(error)) return error;
  if (hasZodFastifySchemaValidationErrors(error)) {
    const validationError = error as FastifyError & { validationContext?: string };
    return fromValidation(
      request,
      validationError.validation as unknown as ValidationIssue[],
      validationError.validationContext,
      request.routeOptions.config?.fieldErrors,
    );
  }
  if (error instanceof ChainError || isTimeout(error)) {
    // The chain or a price source could not answer in time: a retry may well succeed.
    if (!(error instanceof ChainError) || error.retryable || error.code === 'CHAIN_ABORTED') {
      return new AppError(
        'MH_091',
        'A dependency (the Solana RPC endpoint or a price source) did not answer in time. Retry in a few seconds.',
        {
          headers: { 'retry-after': '5' },
          cause: error,
        },
      );
    }
    return new AppError('MH_090', undefined, { cause: error });
  }
  if (!request.raw.complete && request.raw.destroyed) {
    // The client went away (or was cut off for being too slow) before its body arrived; nobody
    // reads this answer, but the request's log line says what happened instead of a failure.
    return new AppError('MH_016', 'The connection closed before the request body was complete.', {
      param: 'body',
    });
  }
  if (isDatabaseUnavailable(error)) {
    return new AppError('MH_091', 'The service is temporarily unavailable. Retry in a few seconds.', {
      headers: { 'retry-after': '5' },
      cause: error,
    });
  }
  const fastifyError = error as Partial<FastifyError>;
  const known = fastifyError.code ? FRAMEWORK_MESSAGES[fastifyError.code] : undefined;
  if (known) {
    return new AppError('MH_016', known.message, known.status === 400 ? {} : { status: known.status });
  }
  if (fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return new AppError('MH_016', `The request body is not valid JSON: ${(error as Error).message}`, {
      param: 'body',
    });
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new AppError('MH_016', fastifyError.message ?? 'Invalid request.', {
      ...(PROTOCOL_STATUSES.has(status) ? { status: status as ProtocolStatus } : {}),
    });
  }
  return new AppError('MH_090', undefined, { cause: error });
}

/** The envelope for an error. */
export function envelope(error: AppError, requestId: string): ErrorEnvelope {
  return {
    error: {
      code: error.code,
      message: error.message,
      requestId,
      ...(error.param === undefined ? {} : { param: error.param }),
    },
  };
}

/** Installs the one error handler and the not-found handler. */
export function registerErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error, request);
    if (appError.code === 'MH_090' || appError.code === 'MH_091') {
      request.log.error({ err: appError.cause ?? error, code: appError.code }, 'request failed');
    }
    return sendError(reply, appError, request.id);
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(
      reply,
      new AppError(
        'MH_016',
        `No route ${request.method} ${request.url.split('?')[0]}. The API reference is at /api/v1/openapi.json.`,
        { status: 404 },
      ),
      request.id,
    ),
  );
}

/**
 * Answers a request the router refused before any hook ran (a malformed or over-long path), so
 * it also sets the request id header the `onRequest` hook would have set.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  return sendError(reply.header('x-request-id', request.id), toAppError(error, request), request.id);
}

function sendError(reply: FastifyReply, error: AppError, requestId: string) {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.status).type('application/json; charset=utf-8').send(envelope(error, requestId));
}
