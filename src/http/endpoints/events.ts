import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Clock } from '../../domain/clock.ts';
import { AppError } from '../../domain/errors.ts';
import { EVENT_TYPES } from '../../domain/transfer.ts';
import type { DeliveryStore, ResendRefusal } from '../../store/deliveries.ts';
import { limit } from '../rate-limit.ts';
import {
  bodyId,
  errorResponses,
  integerId,
  pageLimit,
  pageOffset,
  paginationSchema,
} from '../schemas/common.ts';
import {
  booleanQuery,
  endpointNotFound,
  eventDeliverySchema,
  eventDeliveryView,
  eventNotFound,
  listedEventSchema,
  listedEventView,
} from '../schemas/webhook-deliveries.ts';

const listQuery = z
  .object({
    type: z.enum(EVENT_TYPES).optional(),
    transferId: integerId.optional(),
    deliverySuccess: booleanQuery
      .optional()
      .describe(
        '`true`: events that reached at least one of your endpoints with nothing pending or failed; `false`: all others (pending, failed, or sent to no endpoint).',
      ),
    limit: pageLimit,
    offset: pageOffset,
  })
  .strict();

const eventIdParam = z.object({
  eventId: z.string().regex(/^evt_[A-Za-z0-9_-]{1,60}$/, { error: 'must be an event id (evt_...)' }),
});

const resendBody = z
  .object({
    endpointId: bodyId
      .optional()
      .describe(
        'Send to this endpoint only (even if not subscribed to the type). Default: every active endpoint subscribed to the event type.',
      ),
  })
  .strict()
  // The body may be left out altogether.
  .nullish();

interface EventEndpointDeps {
  deliveries: DeliveryStore;
  clock: Clock;
}

/** `GET /events` and `POST /events/{eventId}/resend`. */
export async function eventEndpoints(app: FastifyInstance, deps: EventEndpointDeps) {
  registerListEvents(app, deps);
  registerResendEvent(app, deps);
}

/** `GET /events`: the last 30 days' events with the state of their deliveries. */
function registerListEvents(app: FastifyInstance, deps: EventEndpointDeps) {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/events',
    {
      config: limit('listEvents'),
      schema: {
        tags: ['Events'],
        operationId: 'listEvents',
        summary: 'List events',
        description:
          'Events of the last 30 days, newest first, each exactly as delivered plus the state of its deliveries to your endpoints. Filters combine with AND. `limit` 1 to 100, default 50.',
        querystring: listQuery,
        response: {
          200: z.object({ items: z.array(listedEventSchema), pagination: paginationSchema }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const owner = request.auth.owner;
      const { limit: pageSize, offset, ...filters } = request.query;
      const page = await deps.deliveries.listEvents(
        owner,
        filters,
        { limit: pageSize, offset },
        deps.clock.now(),
      );
      return {
        items: page.items.map(listedEventView),
        pagination: { total: page.total, limit: pageSize, offset },
      };
    },
  );
}

/** `POST /events/{eventId}/resend`: queues the event again, with a fresh retry window. */
function registerResendEvent(app: FastifyInstance, deps: EventEndpointDeps) {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/events/:eventId/resend',
    {
      config: limit('resendEvent'),
      schema: {
        tags: ['Events'],
        operationId: 'resendEvent',
        summary: 'Resend an event',
        description:
          'Queues the event (of the last 30 days) for delivery again now, with a fresh 3-day retry window. A delivery in flight at this moment is left to finish. Unknown event or endpoint: MH_016 with status 404; a disabled endpoint or no active subscribed endpoint: MH_016 (400). The body is optional.',
        params: eventIdParam,
        body: resendBody,
        response: {
          200: z.object({ eventId: z.string(), deliveries: z.array(eventDeliverySchema) }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const owner = request.auth.owner;
      const { eventId } = request.params;
      const endpointId = request.body?.endpointId;
      const outcome = await deps.deliveries.resend(owner, eventId, endpointId, deps.clock.now());
      if ('refused' in outcome) throw resendRefused(outcome.refused, eventId, endpointId);
      return { eventId, deliveries: outcome.deliveries.map(eventDeliveryView) };
    },
  );
}

/** The error answering a refused resend. */
function resendRefused(refusal: ResendRefusal, eventId: string, endpointId: number | undefined): AppError {
  switch (refusal) {
    case 'event_not_found':
      return eventNotFound(eventId);
    case 'endpoint_not_found':
      return endpointNotFound(endpointId ?? 0);
    case 'endpoint_disabled':
      return new AppError(
        'MH_016',
        `Webhook endpoint ${endpointId} is disabled. Enable it first (POST /webhooks/${endpointId}/enable).`,
        { param: 'endpointId' },
      );
    case 'no_endpoint':
      return new AppError(
        'MH_016',
        'None of your active webhook endpoints is subscribed to this event type. Pass `endpointId` to send it to one anyway.',
      );
  }
}
