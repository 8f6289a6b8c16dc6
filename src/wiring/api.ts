import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { ensureLocalAdminToken, firstKeyBanner, showFirstKey } from '../bootstrap.ts';
import { createMintLookup, createSolCostEstimator } from '../chain/quote-reads.ts';
import { type AppDeps, buildApp } from '../http/app.ts';
import { chainCheck, databaseCheck } from '../http/endpoints/health.ts';
import { startMetricsServer } from '../http/metrics-server.ts';
import { priorityFeePolicy } from '../platform/platform.ts';
import { type PortClaim, type PortContext, portUnavailable } from '../port-check.ts';
import { createPriceResolverFromConfig } from '../prices/resolver.ts';
import { removeServiceFile, writeServiceFile } from '../service-file.ts';
import { countOtherProcesses, databaseIdentity } from '../store/deployment.ts';
import { API_PROCESS_NAME, type ServiceParts } from './parts.ts';

/** The HTTP API, listening; in local mode, announced (first key, service file). Answers where it listens. */
export async function apiRole(parts: ServiceParts): Promise<{ app: FastifyInstance; url: string }> {
  const { config, progress } = parts;
  const adminToken =
    config.adminToken ?? (config.mode === 'local' ? await ensureLocalAdminToken(config.dataDir) : undefined);
  const redis = openRateLimitRedis(parts);
  if (!redis) await warnOfSeparateRateLimits(parts);
  const app = await buildApp(await appDeps(parts, adminToken, redis));
  // The app closes first: it stops accepting and finishes in-flight requests.
  parts.onStop(() => app.close());
  progress.info({ step: 'http' }, 'Starting: the HTTP API');
  const url = await app
    .listen({ port: config.http.port, host: config.http.host })
    .catch(listenFailure(parts.ports.http, parts.ports.context));
  // Only now, with every port bound: a start that stopped earlier has issued no key.
  if (config.mode === 'local') await announceLocalService(parts, url);
  return { app, url };
}

/** The metrics endpoint of a process without the API (the API serves them itself). Answers where it serves them. */
export async function metricsRole(parts: ServiceParts): Promise<string> {
  const { config } = parts;
  parts.progress.info({ step: 'metrics' }, 'Starting: the metrics endpoint');
  const server = await startMetricsServer(parts.metrics, {
    port: config.metricsPort,
    host: config.http.host,
  }).catch(listenFailure(parts.ports.metrics, parts.ports.context));
  parts.onStop(server.close);
  return server.url;
}

/** A server's listen failure as the port it concerns; any other failure as it is. */
function listenFailure(claim: PortClaim, context: PortContext) {
  return async (error: NodeJS.ErrnoException): Promise<never> => {
    throw error.syscall === 'listen' ? await portUnavailable(claim, error, context) : error;
  };
}

/** The Redis that shares rate-limit counters between processes, when REDIS_URL is set. */
function openRateLimitRedis({ config, logger, onStop }: ServiceParts): Redis | undefined {
  if (!config.redisUrl) return undefined;
  const redis = new Redis(config.redisUrl, {
    maxRetriesPerRequest: 1,
    connectTimeout: 1_000,
    enableOfflineQueue: false,
  });
  redis.on('error', (error) =>
    logger.warn({ err: error }, 'redis unavailable; rate limits are not enforced'),
  );
  onStop(async () => redis.disconnect());
  return redis;
}

/** Without Redis, each API process on a shared database counts rate limits on its own: says so. */
async function warnOfSeparateRateLimits({ db, applicationName, logger }: ServiceParts) {
  if (db.kind !== 'postgres') return;
  const processes = 1 + (await countOtherProcesses(db, API_PROCESS_NAME, applicationName));
  if (processes > 1) {
    logger.warn(
      { apiProcesses: processes },
      `${processes} API processes use this database without REDIS_URL: each counts rate limits on its own, so a key may get up to ${processes} times its limits`,
    );
  }
}

/** The HTTP app's dependencies, from the shared parts. */
async function appDeps(
  parts: ServiceParts,
  adminToken: string | undefined,
  redis: Redis | undefined,
): Promise<AppDeps> {
  const { config, db, chain, clock, logger } = parts;
  return {
    config: {
      bodyLimitBytes: config.http.bodyLimitBytes,
      secureCookies: config.mode === 'production',
      timeouts: config.http.timeouts,
      metricsEnabled: config.metricsEnabled,
      authCacheMs: config.authCacheMs,
      adminToken,
      quoteTtlMs: config.quoteTtlMs,
      feeSchedule: config.feeSchedule,
      webhookPolicy: config.webhookPolicy,
      rewardsMinClaimLamports: config.rewardsMinClaimLamports,
    },
    db,
    store: parts.store,
    secrets: parts.secrets,
    clock,
    logger,
    redis,
    rateLimitNamespace: config.rateLimitNamespace ?? `tr-rl:${await databaseIdentity(db)}`,
    prices: createPriceResolverFromConfig(config.prices, {
      clock,
      log: logger.child({ component: 'prices' }),
    }),
    mints: createMintLookup(chain),
    solCosts: createSolCostEstimator({
      chain,
      priorityFees: priorityFeePolicy(parts.platform, config.chain.priorityFeeMicroLamportsPerCu),
    }),
    webhookSender: parts.webhookSender,
    chain,
    priorityFeeFloorMicroLamportsPerCu: config.chain.priorityFeeMicroLamportsPerCu,
    platform: parts.platform,
    platformAdmin: parts.platformAdmin,
    metricsRegistry: parts.metrics,
    readinessChecks: [databaseCheck(db), chainCheck(chain)],
  };
}

/** Local mode: shows the first API key, and records where the service listens in DATA_DIR (service.json). */
async function announceLocalService(
  { config, store, clock, localRpcUrl, localChainProfile, logger, onStop }: ServiceParts,
  url: string,
) {
  // The log's own writes may wait behind a full pipe: flushed first, the steps said come before the key.
  await new Promise<void>((resolve) => logger.flush(() => resolve()));
  await showFirstKey(store.integrations, clock, (key, created) =>
    process.stdout.write(firstKeyBanner(key, created, url)),
  );
  await writeServiceFile(config.dataDir, {
    url,
    pid: process.pid,
    rpcUrl: config.chain.rpcUrl ?? localRpcUrl,
    ...(localChainProfile ? { chainProfile: localChainProfile } : {}),
  }).then(
    () => onStop(() => removeServiceFile(config.dataDir, process.pid)),
    (error) => logger.warn({ err: error }, 'could not record where the service listens in DATA_DIR'),
  );
}
