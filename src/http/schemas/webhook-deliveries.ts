import { z } from 'zod';
import { EVENT_TYPES } from '../../domain/transfer.ts';
import type { EventDelivery, ListedEvent, LoggedAttempt } from '../../store/deliveries.ts';
import { transferSchema } from './transfers.ts';

const dateTime = z.iso.datetime();

/** `true` or `false` in a query string. */
export const booleanQuery = z
  .enum(['true', 'false'], { error: 'must be true or false' })
  .transform((value) => value === 'true');

/** One HTTP attempt to an endpoint, as the delivery log shows it. */
export const deliveryAttemptSchema = z
  .object({
    id: z.int(),
    eventId: z.string().describe('The event sent (`evt_...`); a test send has an id of its own.'),
    eventType: z.string().describe('An event type, or `ping` for a test send.'),
    trigger: z
      .enum(['event', 'resend', 'test'])
      .describe('`event`: the event happened; `resend`: you asked again; `test`: a test send.'),
    attempt: z.int().describe('Attempt number within its round (a resend or re-enable starts a new round).'),
    attemptedAt: dateTime,
    success: z.boolean().describe('True when the endpoint answered 2xx within 10 s.'),
    responseStatus: z.int().nullable().describe('The HTTP status, or null when no response came.'),
    responseBody: z
      .string()
      .nullable()
      .describe('The start of the response body (at most 500 characters); null when no response came.'),
    durationMs: z.number().describe('Time until the response (or the failure).'),
    error: z
      .string()
      .nullable()
      .describe('Why no response came (refused, timed out, ...); null when one did.'),
  })
  .meta({ id: 'WebhookDeliveryAttempt' });

/** The wire shape of a logged attempt. */
export function deliveryAttemptView(attempt: LoggedAttempt): z.infer<typeof deliveryAttemptSchema> {
  return {
    id: attempt.id,
    eventId: attempt.eventId,
    eventType: attempt.eventType,
    trigger: attempt.trigger,
    attempt: attempt.attempt,
    attemptedAt: attempt.attemptedAt.toISOString(),
    success: attempt.succeeded,
    responseStatus: attempt.statusCode,
    responseBody: attempt.responseExcerpt,
    durationMs: attempt.durationMs,
    error: attempt.error,
  };
}

/** The state of an event's delivery to one endpoint. */
export const eventDeliverySchema = z
  .object({
    endpointId: z.int(),
    status: z
      .enum(['pending', 'succeeded', 'failed'])
      .describe('`failed`: retried for 3 days without success; resend it to try again.'),
    trigger: z.enum(['event', 'resend']),
    attempts: z.int().describe('Attempts in the current round.'),
    nextAttemptAt: dateTime.nullable().describe('When it is tried next; null unless pending.'),
    lastAttemptAt: dateTime.nullable(),
    lastResponseStatus: z.int().nullable(),
    lastError: z.string().nullable(),
    completedAt: dateTime.nullable().describe('When it succeeded or failed for good.'),
  })
  .meta({ id: 'EventDelivery' });

/** The wire shape of an event's delivery to one endpoint. */
export function eventDeliveryView(delivery: EventDelivery): z.infer<typeof eventDeliverySchema> {
  return {
    endpointId: delivery.endpointId,
    status: delivery.status,
    trigger: delivery.trigger,
    attempts: delivery.attempts,
    nextAttemptAt: delivery.nextAttemptAt?.toISOString() ?? null,
    lastAttemptAt: delivery.lastAttemptAt?.toISOString() ?? null,
    lastResponseStatus: delivery.lastStatusCode,
    lastError: delivery.lastError,
    completedAt: delivery.completedAt?.toISOString() ?? null,
  };
}

/** An event as delivered, with the state of its deliveries. */
export const listedEventSchema = z
  .object({
    id: z.string().describe('`evt_...`; receivers deduplicate by it.'),
    type: z.enum(EVENT_TYPES),
    createdAt: dateTime,
    isTest: z.boolean(),
    apiVersion: z.literal('v1'),
    sequence: z.int().describe('1, 2, 3, ... per transfer, so a receiver can spot a gap.'),
    data: z.object({ transfer: transferSchema }),
    deliverySuccess: z
      .boolean()
      .describe('True when the event reached at least one of your endpoints and none is pending or failed.'),
    deliveries: z.array(eventDeliverySchema).describe('One per endpoint of yours it was sent to.'),
  })
  .meta({ id: 'Event' });

/** The wire shape of a listed event: the payload exactly as delivered, then its delivery state. */
export function listedEventView(event: ListedEvent) {
  return {
    ...(event.payload as Omit<z.input<typeof listedEventSchema>, 'deliverySuccess' | 'deliveries'>),
    deliverySuccess: event.deliverySuccess,
    deliveries: event.deliveries.map(eventDeliveryView),
  };
}
