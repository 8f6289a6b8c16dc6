import { z } from 'zod';

/** The error envelope every failed request receives. */
export const errorEnvelopeSchema = z
  .object({
    error: z.object({
      code: z
        .string()
        .regex(/^MH_\d{3}$/)
        .describe('Stable error code, e.g. MH_016.'),
      message: z.string().describe('What went wrong and how to fix it.'),
      requestId: z.string().describe('The id of this request; also in the X-Request-Id header.'),
      param: z.string().optional().describe('The field or parameter at fault, when there is one.'),
    }),
  })
  .meta({ id: 'ErrorEnvelope' });

export type ErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;

/** Error responses shared by every route, for the OpenAPI document and response checks. */
export const errorResponses = {
  '4xx': errorEnvelopeSchema,
  '5xx': errorEnvelopeSchema,
} as const;

/** Offset pagination metadata of list responses. */
export const paginationSchema = z
  .object({
    total: z.int().describe('Number of items matching the filters.'),
    limit: z.int(),
    offset: z.int(),
  })
  .meta({ id: 'Pagination' });

/** Pagination of a list that also pages by cursor (`startingAfter`): whether items follow the page. */
export const cursorPaginationSchema = paginationSchema
  .extend({
    hasMore: z
      .boolean()
      .describe('Whether items follow this page: pass its last item’s id as `startingAfter` to read them.'),
  })
  .meta({ id: 'CursorPagination' });

/** The largest id: ids travel as JSON numbers, which are exact only up to 2^53 - 1. */
const MAX_ID = Number.MAX_SAFE_INTEGER;

/** Canonical decimal digits: no sign, no leading zero, no spaces, exponent or hexadecimal. */
const DECIMAL_DIGITS = /^(?:0|[1-9][0-9]*)$/;

/**
 * An integer carried as text (a path or query parameter): canonical decimal digits only, so `01`,
 * `+1`, `1e0`, `0x1` and ` 1` are refused rather than read as 1. The OpenAPI document shows the
 * integer schema of `number`: a client sends an integer, which always prints in that form.
 */
function decimal<T extends z.ZodType>(number: T) {
  return z.preprocess(
    (value) => (typeof value === 'string' && DECIMAL_DIGITS.test(value) ? Number(value) : value),
    number,
  );
}

/** An integer from `min` to `max`, with one message stating the whole rule whatever is wrong. */
function boundedInteger(min: number, max: number, rule: string, tooLarge = rule) {
  const error = (issue: { code: string }) => (issue.code === 'too_big' ? tooLarge : rule);
  return z.int({ error }).min(min, { error }).max(max, { error });
}

const ID_TOO_LARGE = `is larger than any id (ids are at most ${MAX_ID})`;

/** A positive integer id in a JSON body: a number, never a string. */
export const bodyId = boundedInteger(1, MAX_ID, 'must be a positive integer', ID_TOO_LARGE);

/** A positive integer id in a path or query string (`/transfers/{transferId}`). */
export const integerId = decimal(
  boundedInteger(
    1,
    MAX_ID,
    'must be a positive integer in decimal digits, without sign, leading zeros or spaces',
    ID_TOO_LARGE,
  ),
);

/** `limit` of list endpoints: 1 to 100, 50 unless given. */
export const pageLimit = decimal(boundedInteger(1, 100, 'must be an integer from 1 to 100').default(50));

/** `offset` of list endpoints: 0 to 1,000,000, 0 unless given. */
export const pageOffset = decimal(
  boundedInteger(0, 1_000_000, 'must be an integer from 0 to 1000000').default(0),
);

/**
 * The body of a POST that takes none: absent, empty or `{}`. Anything else is refused, so a client
 * that believes it is sending options learns that they are not read.
 */
export const noBody = z.object({}).strict().nullish().describe('No body: leave it out or send `{}`.');
