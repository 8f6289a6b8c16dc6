import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Clock } from '../../domain/clock.ts';
import { EVENT_TYPES } from '../../domain/transfer.ts';
import type { DeliveryStore } from '../../store/deliveries.ts';
import { resendEvent } from '../../use-cases/webhook-endpoints.ts';
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
  eventDeliverySchema,
  eventDeliveryView,
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
    endpointId: integerId.optional().describe('Only events sent to this endpoint of yours.'),
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
      const { eventId } = request.params;
      const deliveries = await resendEvent(deps, request.auth.owner, eventId, request.body?.endpointId);
      return { eventId, deliveries: deliveries.map(eventDeliveryView) };
    },
  );
}
