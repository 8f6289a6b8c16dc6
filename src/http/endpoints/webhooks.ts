import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Clock } from '../../domain/clock.ts';
import { EVENT_TYPES } from '../../domain/transfer.ts';
import type { WebhookEndpoint, WebhookStore } from '../../store/webhooks.ts';
import {
  MAX_WEBHOOK_ENDPOINTS,
  type RegisterDeps,
  registerWebhookEndpoint,
} from '../../use-cases/webhook-endpoints.ts';
import { limit } from '../rate-limit.ts';
import { errorResponses, integerId } from '../schemas/common.ts';

export const webhookEndpointSchema = z
  .object({
    id: z.int(),
    url: z.url(),
    secret: z.string().nullable().describe('`whsec_...`: returned only by the create call, null afterwards.'),
    events: z.array(z.enum(EVENT_TYPES)).describe('Subscribed event types.'),
    isActive: z.boolean(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'WebhookEndpoint' });

/** The endpoint as the API shows it; the secret only when just created. */
export function webhookEndpointView(endpoint: WebhookEndpoint, secret: string | null = null) {
  return {
    id: endpoint.id,
    url: endpoint.url,
    secret,
    events: endpoint.events ?? [...EVENT_TYPES],
    isActive: endpoint.isActive,
    createdAt: endpoint.createdAt.toISOString(),
  };
}

const createBody = z
  .object({
    url: z
      .url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' })
      .max(2048)
      .describe('Where events are POSTed. https in production.'),
    events: z
      .union([z.literal('*'), z.array(z.enum(EVENT_TYPES)).min(1)], {
        error: `must be "*" or a non-empty array of event types (${EVENT_TYPES.join(', ')})`,
      })
      .optional()
      .describe(
        'Event types to receive: an array, or "*" (the default) for all, including types added later.',
      ),
  })
  .strict();

const endpointIdParams = z.object({ endpointId: integerId });

interface WebhookEndpointDeps extends RegisterDeps {
  webhooks: WebhookStore;
  clock: Clock;
}

/** `POST /webhooks`, `GET /webhooks`, `DELETE /webhooks/{endpointId}`. */
export async function webhookEndpoints(app: FastifyInstance, deps: WebhookEndpointDeps) {
  registerCreateWebhook(app, deps);
  registerListWebhooks(app, deps);
  registerDeleteWebhook(app, deps);
}

/** `POST /webhooks`: registers an endpoint once it answers a signed ping. */
function registerCreateWebhook(app: FastifyInstance, deps: WebhookEndpointDeps) {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/webhooks',
    {
      config: limit('createWebhook'),
      schema: {
        tags: ['Webhooks'],
        operationId: 'createWebhook',
        summary: 'Register a webhook endpoint',
        description: `The service POSTs a signed \`ping\` event to the URL first; no HTTP response within 5 s is MH_050. At most ${MAX_WEBHOOK_ENDPOINTS} endpoints per integration and mode (MH_051). The secret is shown only in this response.`,
        body: createBody,
        response: { 200: webhookEndpointSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { owner, isTest } = request.auth;
      const { url, events } = request.body;
      const created = await registerWebhookEndpoint(
        deps,
        { owner, isTest },
        { url, events: Array.isArray(events) ? events : null },
      );
      return webhookEndpointView(created.endpoint, created.secret);
    },
  );
}

/** `GET /webhooks`. */
function registerListWebhooks(app: FastifyInstance, deps: WebhookEndpointDeps) {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/webhooks',
    {
      config: limit('listWebhooks'),
      schema: {
        tags: ['Webhooks'],
        operationId: 'listWebhooks',
        summary: 'List webhook endpoints',
        response: { 200: z.object({ items: z.array(webhookEndpointSchema) }), ...errorResponses },
      },
    },
    async (request) => {
      const owner = request.auth.owner;
      return { items: (await deps.webhooks.list(owner)).map((endpoint) => webhookEndpointView(endpoint)) };
    },
  );
}

/** `DELETE /webhooks/{endpointId}`. */
function registerDeleteWebhook(app: FastifyInstance, deps: WebhookEndpointDeps) {
  app.withTypeProvider<ZodTypeProvider>().delete(
    '/webhooks/:endpointId',
    {
      config: limit('deleteWebhook'),
      schema: {
        tags: ['Webhooks'],
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook endpoint',
        description: '`deleted` is false when no endpoint of yours has this id (deleting twice is harmless).',
        params: endpointIdParams,
        response: { 200: z.object({ deleted: z.boolean() }), ...errorResponses },
      },
    },
    async (request) => {
      const owner = request.auth.owner;
      return { deleted: await deps.webhooks.delete(owner, request.params.endpointId, deps.clock.now()) };
    },
  );
}
