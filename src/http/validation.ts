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
 * Whether any string of a request part, value or key at any depth, is one {@link textProblem}
 * refuses: the cheap walk every request takes (no paths built). Walked with a stack of its own,
 * so no nesting can exhaust the call stack.
 */
function holdsBadText(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current === 'string') {
      if (textProblem(current)) return true;
    } else if (current !== null && typeof current === 'object') {
      for (const key in current) {
        if (textProblem(key)) return true;
        pending.push((current as Record<string, unknown>)[key]);
      }
    }
  }
  return false;
}

/** The first string {@link holdsBadText} found, with the path that names its field. */
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

/** What no field of a request part may hold, however its schema reads it. */
function problemOf(httpPart: string | undefined, value: unknown): Problem | undefined {
  const queryProblem =
    httpPart === 'querystring' && value !== null && typeof value === 'object'
      ? findQueryProblem(value as ParsedQuery)
      : undefined;
  return queryProblem ?? (holdsBadText(value) ? findTextProblem(value) : undefined);
}

/** A schema that refuses {@link problemOf} like a schema issue of the field, then reads with `schema`. */
function guarded(schema: z.ZodType, httpPart: string | undefined) {
  return z
    .unknown()
    .superRefine((value, context) => {
      const problem = problemOf(httpPart, value);
      if (problem) context.addIssue({ code: 'custom', path: problem.path, message: problem.message });
    })
    .pipe(schema);
}

/**
 * The zod validation of every request part, which first refuses what no field may hold however
 * its schema reads: text PostgreSQL cannot store or would alter (NUL, unpaired surrogates) in
 * body, path and query alike, and malformed or repeated query parameters. Refusals name the
 * field, whose own error code applies (`externalId` MH_015, wallets MH_011, ...). Only a part
 * found at fault goes through the guarded schema, so well-formed requests pay just the walk.
 */
export const validatorCompiler: FastifySchemaCompiler<z.ZodType> = (route) => {
  const validate = zodValidatorCompiler(route);
  const refuse = zodValidatorCompiler({ ...route, schema: guarded(route.schema, route.httpPart) });
  return (data) => (problemOf(route.httpPart, data) ? refuse(data) : validate(data));
};

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
