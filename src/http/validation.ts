import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';
import { validatorCompiler as zodValidatorCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MALFORMED_QUERY, type ParsedQuery } from './parsing.ts';
import { noBody } from './schemas/common.ts';

type Problem = { path: string[]; message: string };

/** Why a text cannot be taken as sent: PostgreSQL refuses NUL, and unpaired surrogates would be altered. */
function textProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  if (!text.isWellFormed()) return 'must be well-formed Unicode (it holds an unpaired surrogate)';
  return undefined;
}

/**
 * The first string of a request part, value or key at any depth, that {@link textProblem}
 * refuses. Walked with a stack of its own, so no nesting can exhaust the call stack.
 */
function findTextProblem(value: unknown): Problem | undefined {
  const pending: { value: unknown; path: string[] }[] = [{ value, path: [] }];
  while (pending.length > 0) {
    const { value: current, path } = pending.pop()!;
    if (typeof current === 'string') {
      const message = textProblem(current);
      if (message) return { path, message };
    } else if (current !== null && typeof current === 'object') {
      // Pushed last to first, so the first problem in the request's own order is the one reported.
      for (const [key, child] of Object.entries(current).reverse()) {
        const message = textProblem(key);
        if (message) return { path: [...path, key], message: `has a name that ${message}` };
        pending.push({ value: child, path: [...path, key] });
      }
    }
  }
  return undefined;
}

/** Query parameters with a malformed percent-encoding, or given more than once (none takes a list). */
function findQueryProblem(query: ParsedQuery): Problem | undefined {
  const malformed = query[MALFORMED_QUERY]?.[0];
  if (malformed !== undefined) {
    return { path: [malformed], message: 'is not valid percent-encoded UTF-8 (encode "%" as "%25")' };
  }
  for (const [name, value] of Object.entries(query)) {
    if (Array.isArray(value)) return { path: [name], message: 'is given more than once; give it once' };
  }
  return undefined;
}

/** Checks a request part before its schema reads it, reporting like a schema issue of the field. */
function guardFor(httpPart: string | undefined) {
  return z.unknown().superRefine((value, context) => {
    const problem =
      (httpPart === 'querystring' && value !== null && typeof value === 'object'
        ? findQueryProblem(value as ParsedQuery)
        : undefined) ?? findTextProblem(value);
    if (problem) context.addIssue({ code: 'custom', path: problem.path, message: problem.message });
  });
}

/**
 * The zod validation of every request part, which first refuses what no field may hold however
 * its schema reads: text PostgreSQL cannot store or would alter (NUL, unpaired surrogates) in
 * body, path and query alike, and malformed or repeated query parameters. Refusals name the
 * field, whose own error code applies (`externalId` MH_015, wallets MH_011, ...).
 */
export const validatorCompiler: FastifySchemaCompiler<z.ZodType> = (route) =>
  zodValidatorCompiler({ ...route, schema: guardFor(route.httpPart).pipe(route.schema) });

const noQuery = z.object({}).strict();
const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Routes under `prefixes` refuse what they do not read (typos are never silently ignored): a
 * route that declares no query parameters refuses any, and one that declares no body accepts
 * only none or `{}`. Must be installed before the routes are registered.
 */
export function refuseUndeclaredInput(app: FastifyInstance, prefixes: readonly string[]) {
  app.addHook('onRoute', (route) => {
    if (!prefixes.some((prefix) => route.url.startsWith(prefix))) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const takesBody = methods.some((method) => METHODS_WITH_BODY.has(method));
    route.schema = {
      ...route.schema,
      querystring: route.schema?.querystring ?? noQuery,
      ...(takesBody && !route.schema?.body ? { body: noBody } : {}),
    };
  });
}
