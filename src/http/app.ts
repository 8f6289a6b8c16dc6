import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import { serializerCompiler } from 'fastify-type-provider-zod';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Chain } from '../chain/types.ts';
import type { Clock } from '../domain/clock.ts';
import { AppError } from '../domain/errors.ts';
import { DEFAULT_MIN_CLAIM_LAMPORTS } from '../domain/rewards.ts';
import type { PlatformAdmin } from '../platform/admin.ts';
import type { Platform } from '../platform/platform.ts';
import type { PriceResolver } from '../prices/resolver.ts';
import type { Db } from '../store/db.ts';
import type { Store } from '../store/index.ts';
import type { SecretBox } from '../store/secret-box.ts';
import type { WebhookSender } from '../webhooks/sender.ts';
import { assertAdmin } from './admin-auth.ts';
import type { AppConfig } from './app-config.ts';
import { type AuthContext, createAuthenticator, createLiveKeyNotice } from './auth.ts';
import { consolePlugin } from './console/index.ts';
import type { OperatorDeps } from './console/operator/index.ts';
import { adminIntegrationEndpoints } from './endpoints/admin/integrations.ts';
import { adminPlatformEndpoints } from './endpoints/admin/platform.ts';
import { adminRewardEndpoints } from './endpoints/admin/rewards.ts';
import { eventEndpoints } from './endpoints/events.ts';
import { databaseCheck, healthEndpoints, type ReadinessCheck } from './endpoints/health.ts';
import { rewardEndpoints } from './endpoints/rewards/index.ts';
import { type TransferEndpointDeps, transferEndpoints } from './endpoints/transfers/index.ts';
import { usageEndpoints } from './endpoints/usage.ts';
import { webhookDeliveryEndpoints } from './endpoints/webhook-deliveries.ts';
import { webhookEndpointActionEndpoints } from './endpoints/webhook-endpoint-actions.ts';
import { webhookEndpoints } from './endpoints/webhooks.ts';
import { answerFrameworkError, registerErrorHandling } from './errors.ts';
import { type ChangeRunner, createChangeRunner, registerIdempotency } from './idempotency.ts';
import { registerMetrics } from './metrics.ts';
import { registerOpenApi } from './openapi.ts';
import { parseQuery, registerJsonParser } from './parsing.ts';
import { answerUnroutedRequests, createClientErrorHandler } from './protocol-errors.ts';
import { registerRateLimits } from './rate-limit.ts';
import { createRequestIdGenerator } from './request-id.ts';
import { refuseUndeclaredInput, validatorCompiler } from './validation.ts';

/** Everything the HTTP app needs, passed in so tests and benches can build it around real parts. */
export interface AppDeps {
  config: AppConfig;
  db: Db;
  store: Store;
  /** The deployment's encryption key, for the keys derived from it (operator sessions' MACs). */
  secrets: Pick<SecretBox, 'deriveKey'>;
  clock: Clock;
  logger: Logger;
  /** Shares rate-limit counters between processes; without it each process counts on its own. */
  redis?: Redis | undefined;
  /** This deployment's name for its rate-limit counters in Redis (one Redis may serve several). */
  rateLimitNamespace: string;
  prices: PriceResolver;
  mints: TransferEndpointDeps['mints'];
  solCosts: TransferEndpointDeps['solCosts'];
  /** The chain the routes are deployed on. */
  chain: Chain;
  /** The least compute-unit price of prepared transactions (PRIORITY_FEE_MICROLAMPORTS_PER_CU). */
  priorityFeeFloorMicroLamportsPerCu: bigint;
  webhookSender: WebhookSender;
  /** The router program, protocol config, platform keys and route settings. */
  platform: Platform;
  /** Reads and initialises the platform on chain (admin API). */
  platformAdmin: PlatformAdmin;
  readinessChecks?: ReadinessCheck[];
  metricsRegistry?: Registry;
}

/** Builds the Fastify app: API under /api/v1, console under /dashboard, admin under /admin/v1, docs, health and metrics. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  // Requests the router refuses are answered before any hook runs, so they are recorded (metrics,
  // log line) through the recorder the configured app hands back.
  let recordResponse: ResponseRecorder | undefined;
  const app = createFastify(deps, (request, reply) => recordResponse?.(request, reply));
  try {
    recordResponse = await configure(app, deps);
    await app.ready();
    return app;
  } catch (error) {
    // Whatever was set up (notification subscriptions, plugins) is released before failing.
    await app.close().catch(() => {});
    throw error;
  }
}

/** Records one answered request: its metrics and its log line. */
type ResponseRecorder = (request: FastifyRequest, reply: FastifyReply) => void;

function createFastify(deps: AppDeps, recordRefusal: ResponseRecorder) {
  const requestId = createRequestIdGenerator();
  const { timeouts } = deps.config;
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // One log line per request, written by the onResponse hook below with the route and caller.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: requestId,
    bodyLimit: deps.config.bodyLimitBytes,
    // Requests arriving while closing get the error envelope from the onRequest hook below.
    return503OnClosing: false,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200, querystringParser: parseQuery },
    // A path the router cannot decode or that is too long, before any hook runs.
    frameworkErrors: (error, request, reply) => {
      reply.raw.once('finish', () => recordRefusal(request, reply));
      return answerFrameworkError(error, request, reply);
    },
    // What Node refuses before Fastify sees a request, a timed-out request included.
    clientErrorHandler: createClientErrorHandler({
      newRequestId: () => requestId(),
      timeouts,
      log: deps.logger as FastifyBaseLogger,
    }),
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    http: {
      // Checked by the onRequest hook below, which answers with the envelope.
      requireHostHeader: false,
      requestTimeout: timeouts.requestMs,
      headersTimeout: timeouts.headersMs,
      // Node checks the two timeouts on this period (30 s by default, which would let a request
      // overstay its timeout by as much); checking every second is cheap.
      connectionsCheckingInterval: Math.min(1_000, Math.ceil(timeouts.headersMs / 4)),
    },
  });
  answerUnroutedRequests(app.server, requestId);
  return app;
}

/**
 * Sets the app up, in the order Fastify applies it: how input is validated and parsed and errors
 * answered; which requests are admitted; how answers are recorded; the API reference, health, the
 * caller's authentication, then the public API, the console and (with an admin token) the operator's
 * console and the admin API.
 */
async function configure(app: FastifyInstance, deps: AppDeps): Promise<ResponseRecorder> {
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandling(app);
  registerJsonParser(app);
  refuseUndeclaredInput(app, ['/api/v1/', '/admin/v1/']);
  registerRequestAdmission(app);
  const recordResponse = registerResponseRecording(app, deps);
  await registerOpenApi(app);
  await app.register(healthEndpoints, { checks: deps.readinessChecks ?? [databaseCheck(deps.db)] });
  const authenticator = await registerAuthentication(app, deps);
  await app.register(publicApi(deps, authenticator), { prefix: '/api/v1' });
  const adminToken = deps.config.adminToken;
  await app.register(
    consolePlugin({
      store: deps.store,
      authenticateKey: authenticator.authenticateKey,
      chain: deps.chain,
      platform: deps.platform,
      clock: deps.clock,
      secureCookies: deps.config.secureCookies ?? false,
      signInsPerMinute: deps.config.consoleSignInsPerMinute,
      actionsPerMinute: deps.config.consoleActionsPerMinute,
      ...(adminToken ? { operator: operatorDeps(deps, adminToken) } : {}),
      webhooks: {
        sender: deps.webhookSender,
        policy: deps.config.webhookPolicy,
        ...(deps.config.webhookPingTimeoutMs ? { pingTimeoutMs: deps.config.webhookPingTimeoutMs } : {}),
      },
      rewards: {
        claims: claimDeps(deps),
        minClaimLamports: deps.config.rewardsMinClaimLamports ?? DEFAULT_MIN_CLAIM_LAMPORTS,
      },
    }),
    { prefix: '/dashboard' },
  );
  if (adminToken) await app.register(adminApi(deps, adminToken), { prefix: '/admin/v1' });
  return recordResponse;
}

/** What the operator's console acts through: the admin API's token, store and platform administration. */
function operatorDeps(deps: AppDeps, adminToken: string): OperatorDeps {
  return {
    adminToken,
    sessionMacKey: deps.secrets.deriveKey('operator-session-mac'),
    store: deps.store,
    platformAdmin: deps.platformAdmin,
    platform: deps.platform,
    chain: deps.chain,
    clock: deps.clock,
  };
}

/**
 * Every answer carries its request id. While shutting down, a request that still arrives on a
 * kept-alive connection is refused with MH_091, answers still in flight tell their clients not to
 * reuse the connection, and connections are closed as soon as their answer is sent, so the server
 * stops without waiting for idle clients to hang up.
 */
function registerRequestAdmission(app: FastifyInstance) {
  let closing = false;
  let closeIdle: NodeJS.Timeout | undefined;
  app.addHook('preClose', async () => {
    closing = true;
    closeIdle = setInterval(() => app.server.closeIdleConnections(), 50);
  });
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (closing) {
      return done(
        new AppError('MH_091', 'The service is restarting. Retry in a few seconds.', {
          headers: { 'retry-after': '5' },
        }),
      );
    }
    // HTTP/1.1 requires Host (RFC 9112); Node's own refusal would be a bare 400, so it is checked here.
    if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
      return done(new AppError('MH_016', 'An HTTP/1.1 request must carry a Host header.', { param: 'Host' }));
    }
    done();
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  app.addHook('onClose', async () => clearInterval(closeIdle));
}

/** Records every answered request (metrics when enabled, one log line at info); answers the recorder. */
function registerResponseRecording(app: FastifyInstance, deps: AppDeps): ResponseRecorder {
  const logsRequests = deps.logger.isLevelEnabled('info');
  const observe = deps.config.metricsEnabled ? registerMetrics(app, deps.metricsRegistry) : undefined;
  const recordResponse: ResponseRecorder = (request, reply) => {
    observe?.(request, reply);
    if (!logsRequests) return;
    request.log.info(
      {
        method: request.method,
        route: request.routeOptions.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        integrationId: request.auth?.integrationId ?? request.consoleCaller?.auth.integrationId,
      },
      'request',
    );
  };
  app.addHook('onResponse', (request, reply, done) => {
    recordResponse(request, reply);
    done();
  });
  return recordResponse;
}

type Authenticator = ReturnType<typeof createAuthenticator>;

/** The authenticator of API keys, following changes to them until the app closes. */
async function registerAuthentication(app: FastifyInstance, deps: AppDeps): Promise<Authenticator> {
  const authenticator = createAuthenticator({
    integrations: deps.store.integrations,
    clock: deps.clock,
    cacheMs: deps.config.authCacheMs,
    log: deps.logger,
  });
  const stopFollowingAuth = await authenticator.follow(deps.db, deps.logger);
  app.addHook('onClose', stopFollowingAuth);
  return authenticator;
}

/** The public API scope: every request authenticated, rate-limited and idempotent, then its endpoints. */
function publicApi(deps: AppDeps, authenticator: Authenticator) {
  return async (api: FastifyInstance) => {
    api.decorateRequest('auth', null as unknown as AuthContext);
    const noteLiveKey = createLiveKeyNotice(deps.platform.cluster);
    api.addHook('onRequest', async (request) => {
      request.auth = await authenticator.authenticate(request);
      noteLiveKey(request.auth, request.log);
    });
    await registerRateLimits(api, { redis: deps.redis, namespace: deps.rateLimitNamespace });
    const idempotency = { db: deps.db, store: deps.store.idempotency, clock: deps.clock };
    registerIdempotency(api, {
      ...idempotency,
      scopeOf: (request) => `key:${request.auth.apiKeyId}`,
      defaultPolicy: 'required',
    });
    await registerPublicEndpoints(api, deps, createChangeRunner(idempotency));
  };
}

/** The public API's endpoints: transfers, webhooks, deliveries, events, usage and rewards. */
async function registerPublicEndpoints(api: FastifyInstance, deps: AppDeps, runChange: ChangeRunner) {
  await api.register(transferEndpoints, {
    transfers: deps.store.transfers,
    mints: deps.mints,
    prices: deps.prices,
    feeSchedule: deps.config.feeSchedule,
    solCosts: deps.solCosts,
    runChange,
    clock: deps.clock,
    quoteTtlMs: deps.config.quoteTtlMs,
    chain: deps.chain,
    platform: deps.platform,
    programAddress: deps.platform.programAddress,
    deployments: deps.store.deployments,
    recovery: deps.store.recovery,
    hops: deps.store.hops,
    db: deps.db,
    ...(deps.config.fundingPollMs ? { fundingPollMs: deps.config.fundingPollMs } : {}),
    priorityFeeFloorMicroLamportsPerCu: deps.priorityFeeFloorMicroLamportsPerCu,
  });
  await api.register(webhookEndpoints, {
    webhooks: deps.store.webhooks,
    sender: deps.webhookSender,
    policy: deps.config.webhookPolicy,
    clock: deps.clock,
    ...(deps.config.webhookPingTimeoutMs ? { pingTimeoutMs: deps.config.webhookPingTimeoutMs } : {}),
  });
  await api.register(webhookEndpointActionEndpoints, {
    webhooks: deps.store.webhooks,
    clock: deps.clock,
  });
  await api.register(webhookDeliveryEndpoints, {
    deliveries: deps.store.deliveries,
    sender: deps.webhookSender,
    clock: deps.clock,
  });
  await api.register(eventEndpoints, { deliveries: deps.store.deliveries, clock: deps.clock });
  await api.register(usageEndpoints, { transfers: deps.store.transfers, rewards: deps.store.rewards });
  await api.register(rewardEndpoints, {
    rewards: deps.store.rewards,
    runChange,
    clock: deps.clock,
    minClaimLamports: deps.config.rewardsMinClaimLamports ?? DEFAULT_MIN_CLAIM_LAMPORTS,
    platform: deps.platform,
    claims: claimDeps(deps),
  });
}

/** What reward claims need, for the API and the console alike. */
function claimDeps(deps: AppDeps) {
  return {
    db: deps.db,
    rewards: deps.store.rewards,
    chain: deps.chain,
    platform: deps.platform,
    clock: deps.clock,
  };
}

/** The admin API scope: every request carries the admin token; idempotent when asked; its endpoints. */
function adminApi(deps: AppDeps, adminToken: string) {
  return async (admin: FastifyInstance) => {
    // The admin API is for operators (docs/operations.md), not part of the public reference.
    admin.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true };
    });
    admin.addHook('onRequest', async (request) => assertAdmin(request, adminToken));
    registerIdempotency(admin, {
      db: deps.db,
      store: deps.store.idempotency,
      clock: deps.clock,
      scopeOf: () => 'admin',
      defaultPolicy: 'optional',
    });
    await admin.register(adminIntegrationEndpoints, {
      integrations: deps.store.integrations,
      clock: deps.clock,
      cluster: deps.platform.cluster,
    });
    await admin.register(adminPlatformEndpoints, {
      platform: deps.platform,
      platformAdmin: deps.platformAdmin,
      earnings: { db: deps.db, rewards: deps.store.rewards, chain: deps.chain, platform: deps.platform },
    });
    await admin.register(adminRewardEndpoints, {
      integrations: deps.store.integrations,
      rewards: deps.store.rewards,
      chain: deps.chain,
      config: deps.platform.configAddress,
      minClaimLamports: deps.config.rewardsMinClaimLamports ?? DEFAULT_MIN_CLAIM_LAMPORTS,
    });
  };
}
