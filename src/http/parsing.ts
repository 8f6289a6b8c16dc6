import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { AppError } from '../domain/errors.ts';

/**
 * How deep a JSON body may nest arrays and objects. The API's deepest field is five levels down
 * (`settings.fees.tiers[0].name`); anything far deeper is refused before code that walks values
 * recursively (fingerprinting, validation) could exhaust the stack on it.
 */
const MAX_JSON_DEPTH = 32;

/** True when JSON text nests arrays and objects deeper than `limit`; brackets inside strings do not count. */
function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text.charCodeAt(index);
    if (inString) {
      if (char === 0x5c)
        index++; // `\` escapes the next character, a quote included
      else if (char === 0x22) inString = false;
    } else if (char === 0x22) inString = true;
    else if (char === 0x5b || char === 0x7b) {
      if (++depth > limit) return true;
    } else if (char === 0x5d || char === 0x7d) depth--;
  }
  return false;
}

const invalidBody = (message: string) => new AppError('MH_016', message, { param: 'body' });

/**
 * JSON bodies: UTF-8 only (bytes that are not are refused rather than silently replaced by
 * U+FFFD), at most {@link MAX_JSON_DEPTH} levels deep, parsed with prototype-poisoning
 * protection. An empty body counts as no body, so POSTs whose body is optional work with or
 * without `Content-Type: application/json`. Any other body type is refused with 415.
 */
export function registerJsonParser(app: FastifyInstance) {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    const bytes = body as Buffer;
    if (!isUtf8(bytes)) return done(invalidBody('The request body is not valid UTF-8.'), undefined);
    const text = bytes.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
      return done(
        invalidBody(`The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`),
        undefined,
      );
    }
    try {
      done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch (error) {
      done(invalidBody(`The request body is not valid JSON: ${(error as Error).message}`), undefined);
    }
  });
}

/** Marks, on a parsed query, the parameters whose percent-encoding could not be decoded. */
export const MALFORMED_QUERY: unique symbol = Symbol('malformed query parameters');

export type ParsedQuery = Record<string, string | string[]> & { [MALFORMED_QUERY]?: string[] };

function decodeQueryPart(text: string): string | null {
  const spaced = text.includes('+') ? text.replaceAll('+', ' ') : text;
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return null;
  }
}

/**
 * Parses a query string like Fastify's own parser (`+` is a space, a repeated name gives a list),
 * except that a malformed percent-encoding (`%zz`, bytes that are not UTF-8) is reported under
 * {@link MALFORMED_QUERY} for validation to refuse, where Fastify's and Node's parsers quietly
 * keep it as literal text or replace it, so the request would run with a value nobody sent.
 */
export function parseQuery(text: string): ParsedQuery {
  const query: ParsedQuery = Object.create(null);
  if (text === '') return query;
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const rawName = equals === -1 ? pair : pair.slice(0, equals);
    const name = decodeQueryPart(rawName);
    const value = equals === -1 ? '' : decodeQueryPart(pair.slice(equals + 1));
    if (name === null || value === null) {
      // Kept as sent, so validation finds the parameter present and reports its encoding.
      query[MALFORMED_QUERY] = [...(query[MALFORMED_QUERY] ?? []), name ?? rawName];
    }
    const key = name ?? rawName;
    const text = value ?? pair.slice(equals + 1);
    const existing = query[key];
    if (existing === undefined) query[key] = text;
    else if (Array.isArray(existing)) existing.push(text);
    else query[key] = [existing, text];
  }
  return query;
}
