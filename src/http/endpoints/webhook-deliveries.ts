import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Clock } from '../../domain/clock.ts';
import type { DeliveryStore } from '../../store/deliveries.ts';
import { endpointNotFound, sendTestEvent } from '../../use-cases/webhook-endpoints.ts';
import type { WebhookSender } from '../../webhooks/sender.ts';
import { limit } from '../rate-limit.ts';
import { errorResponses, integerId, pageLimit, pageOffset, paginationSchema } from '../schemas/common.ts';
import { booleanQuery, deliveryAttemptSchema, deliveryAttemptView } from '../schemas/webhook-deliveries.ts';

const params = z.object({ endpointId: integerId });

const listQuery = z
  .object({
    success: booleanQuery.optional().describe('Only successful (true) or failed (false) attempts.'),
    eventId: z.string().min(1).max(64).optional().describe('Only attempts to deliver this event.'),
    limit: pageLimit,
    offset: pageOffset,
  })
  .strict();

interface WebhookDeliveryDeps {
  deliveries: DeliveryStore;
  sender: Pick<WebhookSender, 'post'>;
  clock: Clock;
}

/** `GET /webhooks/{endpointId}/deliveries` and `POST /webhooks/{endpointId}/test`. */
export async function webhookDeliveryEndpoints(app: FastifyInstance, deps: WebhookDeliveryDeps) {
  registerListDeliveries(app, deps);
  registerTestWebhook(app, deps);
}

/** `GET /webhooks/{endpointId}/deliveries`: the endpoint's delivery log. */
function registerListDeliveries(app: FastifyInstance, deps: WebhookDeliveryDeps) {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/webhooks/:endpointId/deliveries',
    {
      config: limit('webhookDeliveries'),
      schema: {
        tags: ['Webhooks'],
        operationId: 'listWebhookDeliveries',
        summary: 'List delivery attempts to an endpoint',
        description:
          'Every HTTP attempt to this endpoint (event deliveries, retries, resends and test sends), newest first. `limit` 1 to 100, default 50. An id that is not one of your endpoints is MH_016 with status 404.',
        params,
        querystring: listQuery,
        response: {
          200: z.object({ items: z.array(deliveryAttemptSchema), pagination: paginationSchema }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const owner = request.auth.owner;
      const { endpointId } = request.params;
      const { limit: pageSize, offset, success, eventId } = request.query;
      const page = await deps.deliveries.listAttempts(
        owner,
        endpointId,
        { succeeded: success, ...(eventId ? { eventIds: [eventId] } : {}) },
        { limit: pageSize, offset },
      );
      if (!page) throw endpointNotFound(endpointId);
      return {
        items: page.items.map(deliveryAttemptView),
        pagination: { total: page.total, limit: pageSize, offset },
      };
    },
  );
}

/** `POST /webhooks/{endpointId}/test`: a signed ping sent now, its answer logged and reported. */
function registerTestWebhook(app: FastifyInstance, deps: WebhookDeliveryDeps) {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/webhooks/:endpointId/test',
    {
      config: limit('testWebhook'),
      schema: {
        tags: ['Webhooks'],
        operationId: 'testWebhook',
        summary: 'Send a signed test event now',
        description:
          'POSTs a signed `ping` event (`data: { url }`) to the endpoint, active or disabled, waits up to 10 s for the answer and reports it. The attempt appears in the delivery log with trigger `test`; no retries follow.',
        params,
        response: { 200: deliveryAttemptSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { owner, isTest } = request.auth;
      const logged = await sendTestEvent(deps, { owner, isTest }, request.params.endpointId);
      return deliveryAttemptView(logged);
    },
  );
}
