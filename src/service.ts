import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startLocalChain } from '@transfer-router/local-chain';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import {
  ensureLocalAdminToken,
  ensureLocalEncryptionKey,
  firstKeyBanner,
  showFirstKey,
} from './bootstrap.ts';
import { createMintLookup, createSolCostEstimator } from './chain/quote-reads.ts';
import { ROUTER_PROGRAM_ADDRESS } from './chain/router/program.ts';
import { createRpcChain } from './chain/rpc-chain.ts';
import type { Chain } from './chain/types.ts';
import type { Config } from './config.ts';
import { type Clock, systemClock } from './domain/clock.ts';
import { buildApp } from './http/app.ts';
import { chainCheck, databaseCheck } from './http/endpoints/health.ts';
import { startMetricsServer } from './http/metrics-server.ts';
import { createPlatformAdmin } from './platform/admin.ts';
import { ensureLocalPlatformKeys, platformKeysPath } from './platform/local-keys.ts';
import { createPlatform, type Platform, type PlatformKeys } from './platform/platform.ts';
import { localRouterDeployment, reportPlatform, setUpLocalPlatform } from './platform/startup.ts';
import { chainPortError, checkPortsFree, portUnavailable, servicePorts } from './port-check.ts';
import { createPriceResolverFromConfig } from './prices/resolver.ts';
import { createHttpScreening, createListScreening, NO_SCREENING } from './screening/providers.ts';
import { removeServiceFile, writeServiceFile } from './service-file.ts';
import { createPgliteDb, createPostgresDb, type Db } from './store/db.ts';
import { countOtherProcesses, databaseIdentity } from './store/deployment.ts';
import { verifyEncryptionKey } from './store/encryption-check.ts';
import { createStore } from './store/index.ts';
import { migrate } from './store/migrate.ts';
import { createSecretBox, parseEncryptionKey, type SecretBox } from './store/secret-box.ts';
import { createRouteScreening } from './use-cases/screening.ts';
import { createWebhookSender } from './webhooks/sender.ts';
import { createDeploymentReconciler } from './workers/deployment-reconciler.ts';
import { createExpiryWorker } from './workers/expiry.ts';
import { createHousekeepingWorker } from './workers/housekeeping.ts';
import { createKeeperWorker } from './workers/keeper.ts';
import { createOverdueRouteWorker } from './workers/overdue-routes.ts';
import { createRewardClaimWorker } from './workers/reward-claims.ts';
import { createWebhookDeliveryWorker } from './workers/webhook-delivery.ts';

/** Which parts a process runs: the HTTP API, the background workers, or both (`npm start`). */
export interface ServiceRoles {
  api: boolean;
  workers: boolean;
}

export interface RunningService {
  app: FastifyInstance | undefined;
  /** Where the API listens, when it runs. */
  url: string | undefined;
  /** Where a process without the API serves its metrics (the API serves them at `/metrics`). */
  metricsUrl: string | undefined;
  /** The local chain's JSON-RPC endpoint, when the embedded chain runs. */
  localRpcUrl: string | undefined;
  /** The router program, protocol config, platform keys and route settings. */
  platform: Platform;
  storeDescription: string;
  /** Stops accepting work, finishes what is in flight, then releases everything. */
  close(): Promise<void>;
}

/** Where routes are screened: the screening API when configured, else the deny list (empty: none). */
function screeningProvider(config: Config) {
  const { url, apiKey, denylist } = config.platform.screening;
  if (url) return createHttpScreening({ baseUrl: url, apiKey });
  return config.platform.settings.screeningRequired ? createListScreening(denylist) : NO_SCREENING;
}

/** Prefix of the PostgreSQL application name of API processes' connections, followed by a process id. */
const API_PROCESS_NAME = 'transfer-router api ';

/** Where the configured database is, in words. */
function describeDatabase(config: Config): string {
  if (!config.database.url) return `embedded PGlite in ${join(config.dataDir, 'pglite')}`;
  const url = new URL(config.database.url);
  return `PostgreSQL at ${url.hostname}:${url.port || 5432}${url.pathname}`;
}

/** Opens the configured database: a PostgreSQL server, or embedded PGlite in the data directory. */
async function openDatabase(config: Config, applicationName: string): Promise<Db> {
  if (config.database.url) {
    return createPostgresDb({
      url: config.database.url,
      poolSize: config.database.poolSize,
      applicationName,
    });
  }
  return createPgliteDb({ dataDir: join(config.dataDir, 'pglite') });
}

/**
 * The platform's keys: configured, or (embedded chain only) generated and sealed in the data
 * directory on first start. Logs where they come from and their public keys, never more.
 */
async function loadPlatformKeys(config: Config, secrets: SecretBox, progress: Logger): Promise<PlatformKeys> {
  const said = (keys: PlatformKeys) => ({
    step: 'platform-keys',
    admin: keys.admin.address,
    screeningAuthority: keys.screeningAuthority.address,
    feeWallet: keys.feeWallet.address,
  });
  if (config.platform.keys) {
    progress.info(
      said(config.platform.keys),
      'Starting: the platform keys of the PLATFORM_*_KEYPAIR settings',
    );
    return config.platform.keys;
  }
  const path = platformKeysPath(config.dataDir);
  const { keys, created } = await ensureLocalPlatformKeys(config.dataDir, secrets);
  progress.info(
    said(keys),
    created
      ? `Starting: generated the platform keys (admin, screening authority, fee wallet), sealed in ${path}`
      : `Starting: the platform keys sealed in ${path}`,
  );
  return keys;
}

/**
 * The configured chain: any Solana RPC endpoint, or the embedded local chain with the router
 * deployed. Either way the service reads and sends through the same RPC client; only the local
 * chain's airdrop cheat is used in process.
 */
async function openChain(config: Config, logger: Logger, clock: Clock, platform: Platform) {
  if (config.chain.rpcUrl) {
    return {
      chain: createRpcChain({ rpcUrl: config.chain.rpcUrl }) as Chain,
      localRpcUrl: undefined,
      airdrop: undefined,
      close: async () => {},
    };
  }
  const local = await startLocalChain({
    dataDir: join(config.dataDir, 'chain'),
    // The embedded chain answers cheat methods (airdrops, account writes): loopback unless asked.
    host: config.chain.localRpcHost,
    rpcPort: config.chain.localRpcPort,
    clock,
    // The admin is the upgrade authority, so that it may initialise the protocol config.
    programs: [await localRouterDeployment(platform.programAddress, platform.admin.address)],
    log: logger.child({ component: 'local-chain' }),
  });
  return {
    chain: createRpcChain({ rpcUrl: local.rpcUrl }) as Chain,
    localRpcUrl: local.rpcUrl,
    airdrop: local.cheats.airdrop,
    close: () => local.close(),
  };
}

/** Starts the service's parts from a validated configuration. */
export async function startService(
  config: Config,
  roles: ServiceRoles,
  logger: Logger,
): Promise<RunningService> {
  const clock = systemClock;
  const ports = servicePorts(config);
  // Without the API, the workers' metrics get an endpoint of their own.
  const metricsAlone = !roles.api && config.metricsEnabled;
  // A taken port stops the start here, before anything is migrated, started or created.
  await checkPortsFree([
    ...(roles.api ? [ports.http] : []),
    ...(metricsAlone ? [ports.metrics] : []),
    ...ports.chain,
  ]);
  const storeDescription = describeDatabase(config);
  const progress = logger.child({ component: 'startup' });
  // PGlite's first start creates its cluster, which takes seconds: say so rather than seem stuck.
  const creating = !config.database.url && !existsSync(join(config.dataDir, 'pglite', 'PG_VERSION'));
  progress.info(
    { step: 'database', store: storeDescription },
    creating
      ? `Starting: creating the database (${storeDescription}; the first time takes several seconds)`
      : `Starting: opening the database (${storeDescription})`,
  );
  // Connections are named per process, so that API processes can tell how many of them there are.
  const applicationName = `${roles.api ? API_PROCESS_NAME : 'transfer-router worker '}${randomBytes(4).toString('hex')}`;
  const db = await openDatabase(config, applicationName);
  const closers: (() => Promise<unknown>)[] = [() => db.close()];
  const closeAll = async () => {
    for (const close of closers.reverse())
      await close().catch((error) => logger.error({ err: error }, 'close failed'));
  };

  try {
    progress.info({ step: 'migrations' }, 'Starting: migrating the database');
    const applied = await migrate(db);
    if (applied.length > 0)
      progress.info({ step: 'migrations', applied }, `Applied ${applied.length} database migrations`);
    const encryptionKey =
      config.encryptionKey ?? parseEncryptionKey(await ensureLocalEncryptionKey(config.dataDir));
    if (!encryptionKey) throw new Error('the local encryption key file is corrupt');
    const secrets = createSecretBox(encryptionKey);
    await verifyEncryptionKey(db, secrets);
    const store = createStore(db, {
      idempotencyTtlMs: config.idempotencyTtlMs,
      secrets,
    });

    const platform = await createPlatform({
      keys: await loadPlatformKeys(config, secrets, progress),
      programAddress: config.chain.routerProgramId ?? ROUTER_PROGRAM_ADDRESS,
      settings: config.platform.settings,
    });

    if (!config.chain.rpcUrl)
      progress.info(
        { step: 'chain' },
        'Starting: the local chain (loading its state, deploying the router program, opening its JSON-RPC port)',
      );
    const chain = await openChain(config, logger, clock, platform).catch((error) => {
      throw chainPortError(error, ports.chain);
    });
    closers.push(chain.close);
    const platformAdmin = createPlatformAdmin({ chain: chain.chain, platform });
    if (chain.airdrop) {
      progress.info(
        { step: 'platform' },
        'Starting: the platform on the embedded chain (funding its wallets, checking the protocol config)',
      );
      await setUpLocalPlatform({
        chain: chain.chain,
        airdrop: chain.airdrop,
        platform,
        platformAdmin,
        log: progress,
      });
    } else {
      progress.info(
        { step: 'platform' },
        'Starting: checking the router program and protocol config on chain',
      );
      await reportPlatform({ platformAdmin, platform, log: progress });
    }
    const sender = createWebhookSender(config.webhookPolicy);
    closers.push(() => sender.close());

    // One registry: the API serves the keeper's metrics beside its own.
    const metrics = new Registry();
    const workers = roles.workers
      ? [
          createExpiryWorker({ transfers: store.transfers, clock, log: logger.child({ worker: 'expiry' }) }),
          createDeploymentReconciler({
            db,
            chain: chain.chain,
            deployments: store.deployments,
            transfers: store.transfers,
            programAddress: platform.programAddress,
            clock,
            log: logger.child({ worker: 'deployment-reconciler' }),
          }),
          createOverdueRouteWorker({
            db,
            chain: chain.chain,
            hops: store.hops,
            transfers: store.transfers,
            programAddress: platform.programAddress,
            clock,
            log: logger.child({ worker: 'overdue-routes' }),
          }),
          createKeeperWorker({
            db,
            listen: db,
            chain: chain.chain,
            hops: store.hops,
            transfers: store.transfers,
            programAddress: platform.programAddress,
            screen: createRouteScreening({
              provider: screeningProvider(config),
              db,
              chain: chain.chain,
              platform,
              transfers: store.transfers,
              clock,
            }),
            clock,
            metrics,
            log: logger.child({ worker: 'keeper' }),
          }),
          createHousekeepingWorker({
            retention: store.retention,
            clock,
            log: logger.child({ worker: 'housekeeping' }),
            idempotencyTtlMs: config.idempotencyTtlMs,
            eventRetentionMs: config.eventRetentionMs,
          }),
          createRewardClaimWorker({
            db,
            rewards: store.rewards,
            chain: chain.chain,
            platform,
            clock,
            metrics,
            log: logger.child({ worker: 'reward-claims' }),
          }),
          createWebhookDeliveryWorker({
            db,
            deliveries: store.deliveries,
            sender,
            clock,
            log: logger.child({ worker: 'webhook-delivery' }),
          }),
        ]
      : [];
    for (const worker of workers) {
      worker.start();
      closers.push(() => worker.stop());
    }
    let metricsUrl: string | undefined;
    if (metricsAlone) {
      progress.info({ step: 'metrics' }, 'Starting: the metrics endpoint');
      const server = await startMetricsServer(metrics, {
        port: config.metricsPort,
        host: config.http.host,
      }).catch((error) => {
        throw (error as NodeJS.ErrnoException).syscall === 'listen'
          ? portUnavailable(ports.metrics, error)
          : error;
      });
      closers.push(server.close);
      metricsUrl = server.url;
    }

    let app: FastifyInstance | undefined;
    let url: string | undefined;
    if (roles.api) {
      const adminToken =
        config.adminToken ??
        (config.mode === 'local' ? await ensureLocalAdminToken(config.dataDir) : undefined);
      const redis = config.redisUrl
        ? new Redis(config.redisUrl, {
            maxRetriesPerRequest: 1,
            connectTimeout: 1_000,
            enableOfflineQueue: false,
          })
        : undefined;
      redis?.on('error', (error) =>
        logger.warn({ err: error }, 'redis unavailable; rate limits are not enforced'),
      );
      if (redis) closers.push(async () => redis.disconnect());
      if (!redis && db.kind === 'postgres') {
        const processes = 1 + (await countOtherProcesses(db, API_PROCESS_NAME, applicationName));
        if (processes > 1) {
          logger.warn(
            { apiProcesses: processes },
            `${processes} API processes use this database without REDIS_URL: each counts rate limits on its own, so a key may get up to ${processes} times its limits`,
          );
        }
      }

      app = await buildApp({
        config: {
          bodyLimitBytes: config.http.bodyLimitBytes,
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
        store,
        clock,
        logger,
        redis,
        rateLimitNamespace: config.rateLimitNamespace ?? `tr-rl:${await databaseIdentity(db)}`,
        prices: createPriceResolverFromConfig(config.prices, {
          clock,
          log: logger.child({ component: 'prices' }),
        }),
        mints: createMintLookup(chain.chain),
        solCosts: createSolCostEstimator({
          chain: chain.chain,
          priorityFeeMicroLamportsPerCu: config.chain.priorityFeeMicroLamportsPerCu,
        }),
        webhookSender: sender,
        chain: chain.chain,
        priorityFeeFloorMicroLamportsPerCu: config.chain.priorityFeeMicroLamportsPerCu,
        platform,
        platformAdmin,
        metricsRegistry: metrics,
        readinessChecks: [databaseCheck(db), chainCheck(chain.chain)],
      });
      // The app closes first: it stops accepting and finishes in-flight requests.
      const running = app;
      closers.push(() => running.close());
      progress.info({ step: 'http' }, 'Starting: the HTTP API');
      url = await app.listen({ port: config.http.port, host: config.http.host }).catch((error) => {
        throw (error as NodeJS.ErrnoException).syscall === 'listen'
          ? portUnavailable(ports.http, error)
          : error;
      });
      if (config.mode === 'local') {
        // Only now, with every port bound: a start that stopped earlier has issued no key.
        const base = url;
        await showFirstKey(store.integrations, clock, (key, created) =>
          process.stdout.write(firstKeyBanner(key, created, base)),
        );
        await writeServiceFile(config.dataDir, {
          url,
          pid: process.pid,
          rpcUrl: config.chain.rpcUrl ?? chain.localRpcUrl,
        }).then(
          () => closers.push(() => removeServiceFile(config.dataDir, process.pid)),
          (error) => logger.warn({ err: error }, 'could not record where the service listens in DATA_DIR'),
        );
      }
    }
    return {
      app,
      url,
      metricsUrl,
      localRpcUrl: chain.localRpcUrl,
      platform,
      storeDescription,
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
