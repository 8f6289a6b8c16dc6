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

/** A positive integer path id (`/transfers/{transferId}`). */
export const integerId = z.coerce
  .number({ error: 'must be a positive integer' })
  .int({ error: 'must be a positive integer' })
  .min(1, { error: 'must be a positive integer' })
  .max(Number.MAX_SAFE_INTEGER, { error: 'is too large' });
