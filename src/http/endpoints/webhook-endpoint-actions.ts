import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Clock } from '../../domain/clock.ts';
import type { WebhookStore } from '../../store/webhooks.ts';
import {
  DEFAULT_SECRET_OVERLAP_SECONDS,
  enableWebhookEndpoint,
  MAX_SECRET_OVERLAP_SECONDS,
  rotateWebhookSecret,
} from '../../use-cases/webhook-endpoints.ts';
import { limit } from '../rate-limit.ts';
import { errorResponses, integerId } from '../schemas/common.ts';
import { webhookEndpointSchema, webhookEndpointView } from './webhooks.ts';

const params = z.object({ endpointId: integerId });

const rotateBody = z
  .object({
    overlapSeconds: z
      .int()
      .min(0)
      .max(MAX_SECRET_OVERLAP_SECONDS)
      .default(DEFAULT_SECRET_OVERLAP_SECONDS)
      .describe(
        'How long the replaced secret keeps signing deliveries, as a second `v1` signature: 0 to 604800 (7 days), default 86400 (24 h). 0 drops it at once.',
      ),
  })
  .strict()
  // The body may be left out altogether.
  .nullish();

const rotatedSchema = webhookEndpointSchema
  .extend({
    previousSecretExpiresAt: z.iso
      .datetime()
      .nullable()
      .describe('Until when deliveries also carry a signature made with the replaced secret.'),
  })
  .meta({ id: 'RotatedWebhookEndpoint' });

/** `POST /webhooks/{endpointId}/rotate-secret` and `POST /webhooks/{endpointId}/enable`. */
export async function webhookEndpointActionEndpoints(
  app: FastifyInstance,
  deps: { webhooks: WebhookStore; clock: Clock },
) {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post(
    '/webhooks/:endpointId/rotate-secret',
    {
      config: limit('rotateWebhookSecret'),
      schema: {
        tags: ['Webhooks'],
        operationId: 'rotateWebhookSecret',
        summary: 'Rotate the signing secret',
        description:
          'Replaces the secret; the new one is shown only in this response. Until `previousSecretExpiresAt` every delivery carries two `v1` signatures, one per secret, so receivers can switch without losing events. Rotating again during the overlap drops the oldest secret at once. The body is optional.',
        params,
        body: rotateBody,
        response: { 200: rotatedSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { endpoint, secret } = await rotateWebhookSecret(
        deps,
        request.auth.owner,
        request.params.endpointId,
        request.body?.overlapSeconds,
      );
      return {
        ...webhookEndpointView(endpoint, secret),
        previousSecretExpiresAt: endpoint.previousSecretExpiresAt?.toISOString() ?? null,
      };
    },
  );

  routes.post(
    '/webhooks/:endpointId/enable',
    {
      config: limit('enableWebhook'),
      schema: {
        tags: ['Webhooks'],
        operationId: 'enableWebhook',
        summary: 'Re-enable an endpoint',
        description:
          'Re-activates an endpoint that was disabled after 3 days of failed deliveries. Deliveries still pending to it are tried again at once, with a fresh 3-day retry window; events that failed for good can be sent again with `POST /events/{eventId}/resend`. Enabling an active endpoint changes nothing.',
        params,
        response: { 200: webhookEndpointSchema, ...errorResponses },
      },
    },
    async (request) => {
      const endpoint = await enableWebhookEndpoint(deps, request.auth.owner, request.params.endpointId);
      return webhookEndpointView(endpoint);
    },
  );
}
