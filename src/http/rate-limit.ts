import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { AppError } from '../domain/errors.ts';

const WINDOW_MS = 60_000;
/** API keys whose counters each endpoint keeps in process (least recently used ones go first). */
const KEYS_PER_ENDPOINT = 50_000;

/**
 * Requests per API key and endpoint in a 60 s window: the reference's numbers, and the decisions'
 * for the endpoints it leaves out.
 */
export const RATE_LIMITS = {
  createTransfer: 10,
  estimate: 30,
  getTransfer: 60,
  listTransfers: 60,
  getTransferByExternalId: 60,
  prepare: 30,
  confirmBroadcast: 30,
  fundingRefresh: 10,
  fundingConfirm: 10,
  rescuePrepare: 10,
  rescueConfirm: 10,
  reclaimPrepare: 10,
  reclaimConfirm: 10,
  createWebhook: 30,
  listWebhooks: 30,
  deleteWebhook: 30,
  webhookDeliveries: 30,
  testWebhook: 30,
  rotateWebhookSecret: 30,
  enableWebhook: 30,
  listEvents: 30,
  resendEvent: 30,
  usage: 30,
  rewards: 30,
  rewardClaims: 30,
  rewardsWallet: 10,
  rewardsClaim: 10,
} as const;

/**
 * The route config entry for an endpoint's limit: the base number times the integration's
 * `rateLimitMultiplier` setting (1 unless an operator raised it).
 */
export function limit(endpoint: keyof typeof RATE_LIMITS) {
  const base = RATE_LIMITS[endpoint];
  return {
    rateLimit: {
      max: (request: FastifyRequest) => base * request.auth.settings.rateLimitMultiplier,
      // The plugin gives each route's in-process store this size, not the one registered globally.
      cache: KEYS_PER_ENDPOINT,
    },
  };
}

/**
 * Registers per-key, per-endpoint limits in this scope (after authentication, which sets
 * `request.auth`): @fastify/rate-limit with a store per route, counting in this process, or in
 * Redis counters shared by every process, named `<namespace>:<METHOD><route>-<API key id>`.
 */
export async function registerRateLimits(
  scope: FastifyInstance,
  options: { redis: Redis | undefined; namespace: string },
) {
  await scope.register(fastifyRateLimit, {
    global: false,
    timeWindow: WINDOW_MS,
    enableDraftSpec: true,
    ...(options.redis ? { redis: options.redis, nameSpace: `${options.namespace}:` } : {}),
    // When Redis is unreachable, serving without limits beats failing every request.
    skipOnError: true,
    keyGenerator: (request) => request.auth.apiKeyId,
    errorResponseBuilder: (request, context) =>
      new AppError(
        'MH_004',
        `Rate limit of ${context.max} requests per 60 s exceeded for ${request.method} ${request.routeOptions.url}. Retry in ${Math.ceil(context.ttl / 1000)} s.`,
      ),
  });
}
