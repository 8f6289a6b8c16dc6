import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { bootstrapLocalIntegration, ensureLocalAdminToken, ensureLocalEncryptionKey } from './bootstrap.ts';
import { startLocalChain } from './chain/local/start.ts';
import { createMintLookup, createSolCostEstimator } from './chain/quote-reads.ts';
import { ROUTER_PROGRAM_ADDRESS, routerProgramPath } from './chain/router/program.ts';
import { createRpcChain } from './chain/rpc-chain.ts';
import type { Chain } from './chain/types.ts';
import type { Config } from './config.ts';
import { type Clock, systemClock } from './domain/clock.ts';
import { buildApp } from './http/app.ts';
import { createPriceResolverFromConfig } from './prices/resolver.ts';
import { createPgliteDb, createPostgresDb, type Db } from './store/db.ts';
import { verifyEncryptionKey } from './store/encryption-check.ts';
import { createStore } from './store/index.ts';
import { migrate } from './store/migrate.ts';
import { createSecretBox, parseEncryptionKey } from './store/secret-box.ts';
import { createWebhookSender } from './webhooks/sender.ts';
import { createExpiryWorker } from './workers/expiry.ts';
import { createHousekeepingWorker } from './workers/housekeeping.ts';
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
  /** The local chain's JSON-RPC endpoint, when the embedded chain runs. */
  localRpcUrl: string | undefined;
  storeDescription: string;
  /** Stops accepting work, finishes what is in flight, then releases everything. */
  close(): Promise<void>;
}

/** Opens the configured database: a PostgreSQL server, or embedded PGlite in the data directory. */
async function openDatabase(config: Config): Promise<{ db: Db; description: string }> {
  if (config.database.url) {
    const url = new URL(config.database.url);
    return {
      db: createPostgresDb({ url: config.database.url, poolSize: config.database.poolSize }),
      description: `PostgreSQL at ${url.hostname}:${url.port || 5432}${url.pathname}`,
    };
  }
  const dataDir = join(config.dataDir, 'pglite');
  return { db: await createPgliteDb({ dataDir }), description: `embedded PGlite in ${dataDir}` };
}

/** The configured chain: any Solana RPC endpoint, or the embedded local chain with the router deployed. */
async function openChain(config: Config, logger: Logger, clock: Clock) {
  if (config.chain.rpcUrl) {
    return {
      chain: createRpcChain({ rpcUrl: config.chain.rpcUrl }) as Chain,
      localRpcUrl: undefined,
      close: async () => {},
    };
  }
  const local = await startLocalChain({
    dataDir: join(config.dataDir, 'chain'),
    // The embedded chain answers cheat methods (airdrops, account writes): loopback unless asked.
    host: config.chain.localRpcHost,
    rpcPort: config.chain.localRpcPort,
    clock,
    programs: [
      {
        programId: config.chain.routerProgramId ?? ROUTER_PROGRAM_ADDRESS,
        elf: await readFile(routerProgramPath('v0')),
      },
    ],
    log: logger.child({ component: 'local-chain' }),
  });
  return { chain: local.chain, localRpcUrl: local.rpcUrl, close: () => local.close() };
}

/** Starts the service's parts from a validated configuration. */
export async function startService(
  config: Config,
  roles: ServiceRoles,
  logger: Logger,
): Promise<RunningService> {
  const clock = systemClock;
  const { db, description: storeDescription } = await openDatabase(config);
  const closers: (() => Promise<unknown>)[] = [() => db.close()];
  const closeAll = async () => {
    for (const close of closers.reverse())
      await close().catch((error) => logger.error({ err: error }, 'close failed'));
  };

  try {
    await migrate(db);
    const encryptionKey =
      config.encryptionKey ?? parseEncryptionKey(await ensureLocalEncryptionKey(config.dataDir));
    if (!encryptionKey) throw new Error('the local encryption key file is corrupt');
    const secrets = createSecretBox(encryptionKey);
    await verifyEncryptionKey(db, secrets);
    const store = createStore(db, {
      idempotencyTtlMs: config.idempotencyTtlMs,
      secrets,
      transferCacheMs: config.transferCacheMs,
    });

    const chain = await openChain(config, logger, clock);
    closers.push(chain.close);
    const sender = createWebhookSender(config.webhookPolicy);
    closers.push(() => sender.close());

    const workers = roles.workers
      ? [
          createExpiryWorker({ transfers: store.transfers, clock, log: logger.child({ worker: 'expiry' }) }),
          createHousekeepingWorker({
            retention: store.retention,
            clock,
            log: logger.child({ worker: 'housekeeping' }),
            idempotencyTtlMs: config.idempotencyTtlMs,
            eventRetentionMs: config.eventRetentionMs,
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

    let app: FastifyInstance | undefined;
    let url: string | undefined;
    if (roles.api) {
      let adminToken = config.adminToken;
      let firstKey: string | undefined;
      if (config.mode === 'local') {
        adminToken ??= await ensureLocalAdminToken(config.dataDir);
        firstKey = (await bootstrapLocalIntegration(store.integrations, clock))?.key;
      }
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

      app = await buildApp({
        config: {
          bodyLimitBytes: config.http.bodyLimitBytes,
          timeouts: config.http.timeouts,
          metricsEnabled: config.metricsEnabled,
          authCacheMs: config.authCacheMs,
          transferCacheMs: config.transferCacheMs,
          adminToken,
          quoteTtlMs: config.quoteTtlMs,
          feeSchedule: config.feeSchedule,
          webhookPolicy: config.webhookPolicy,
        },
        db,
        store,
        clock,
        logger,
        redis,
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
        readinessChecks: [
          { name: 'database', check: async () => void (await db.query('SELECT 1')) },
          { name: 'chain', check: async (signal) => void (await chain.chain.getSlot({ signal })) },
        ],
      });
      // The app closes first: it stops accepting and finishes in-flight requests.
      const running = app;
      closers.push(() => running.close());
      url = await app.listen({ port: config.http.port, host: config.http.host });
      if (firstKey) printFirstStartBanner(firstKey, url);
    }
    return { app, url, localRpcUrl: chain.localRpcUrl, storeDescription, close: closeAll };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

function printFirstStartBanner(key: string, base: string) {
  process.stdout.write(
    [
      '',
      'First start: created the integration "local" with this test API key (shown only now):',
      `  ${key}`,
      'Try it:',
      `  curl -s -X POST ${base}/api/v1/transfers/estimate -H 'x-api-key: ${key}' -H 'content-type: application/json' -d '{"tokenMint":"So11111111111111111111111111111111111111112","amountRaw":"1000000000"}'`,
      '',
    ].join('\n'),
  );
}
