import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Clock } from '../../domain/clock.ts';
import { AppError } from '../../domain/errors.ts';
import { pingEvent } from '../../domain/events.ts';
import { EVENT_TYPES, type EventType } from '../../domain/transfer.ts';
import { newWebhookSecret } from '../../domain/webhook-signature.ts';
import type { WebhookEndpoint, WebhookStore } from '../../store/webhooks.ts';
import type { WebhookNetworkPolicy, WebhookSender } from '../../webhooks/sender.ts';
import { webhookUrlProblem } from '../../webhooks/sender.ts';
import { signedPost } from '../../webhooks/signed-post.ts';
import { limit } from '../rate-limit.ts';
import { errorResponses, integerId } from '../schemas/common.ts';

/** At most this many endpoints per integration and mode. */
export const MAX_WEBHOOK_ENDPOINTS = 10;
/** How long the reachability ping waits for any HTTP response (decisions: 5 s). */
export const PING_TIMEOUT_MS = 5_000;

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

interface WebhookEndpointDeps {
  webhooks: WebhookStore;
  sender: WebhookSender;
  policy: WebhookNetworkPolicy;
  clock: Clock;
  pingTimeoutMs?: number;
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
      const owner = request.auth.owner;
      const { url } = request.body;
      const problem = webhookUrlProblem(url, deps.policy);
      if (problem) throw new AppError('MH_050', `Webhook URL not allowed: ${problem}.`, { param: 'url' });
      if ((await deps.webhooks.count(owner)) >= MAX_WEBHOOK_ENDPOINTS) throw limitReached();

      const secret = newWebhookSecret();
      const now = deps.clock.now();
      await assertReachable(deps, { url, secret, isTest: request.auth.isTest, now });

      const events: EventType[] | null = Array.isArray(request.body.events)
        ? [...new Set(request.body.events)]
        : null;
      const created = await deps.webhooks.create(owner, { url, events, secret, now }, MAX_WEBHOOK_ENDPOINTS);
      if (created === 'limit_reached') throw limitReached();
      return webhookEndpointView(created, secret);
    },
  );
}

/** POSTs a signed `ping` to a would-be endpoint; no HTTP response in time is MH_050. */
async function assertReachable(
  deps: WebhookEndpointDeps,
  target: { url: string; secret: string; isTest: boolean; now: Date },
) {
  const { url, secret, now } = target;
  const ping = pingEvent({ url, isTest: target.isTest, createdAt: now });
  const result = await signedPost(deps.sender, {
    url,
    secrets: [secret],
    eventId: ping.id,
    eventType: ping.type,
    body: ping.body,
    now,
    timeoutMs: deps.pingTimeoutMs ?? PING_TIMEOUT_MS,
  });
  if (result.kind === 'failed') {
    throw new AppError('MH_050', `Webhook URL unreachable: ${result.error}.`, { param: 'url' });
  }
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

function limitReached() {
  return new AppError(
    'MH_051',
    `Maximum of ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints reached. Delete one before adding another.`,
  );
}
