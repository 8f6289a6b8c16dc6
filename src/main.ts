import { join } from 'node:path';
import closeWithGrace from 'close-with-grace';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { bootstrapLocalIntegration, ensureLocalAdminToken } from './bootstrap.ts';
import { ConfigError, loadConfig } from './config.ts';
import { systemClock } from './domain/clock.ts';
import { buildApp } from './http/app.ts';
import { createPgliteDb, createPostgresDb, type Db } from './store/db.ts';
import { createStore } from './store/index.ts';
import { migrate } from './store/migrate.ts';

/** Wires the service from the environment and runs it until SIGTERM/SIGINT. */
async function main() {
  const config = loadConfig();
  const logger = pino({
    level: config.logLevel,
    base: { service: 'transfer-router', pid: process.pid },
    redact: {
      paths: ['*.authorization', '*["x-api-key"]', '*.key', '*.secret', '*.adminToken'],
      censor: '[redacted]',
    },
  });
  const clock = systemClock;

  const { db, description: storeDescription } = await openDatabase(config);
  await migrate(db);
  const store = createStore(db, { idempotencyTtlMs: config.idempotencyTtlMs });

  let adminToken = config.adminToken;
  if (config.mode === 'local') {
    adminToken ??= await ensureLocalAdminToken(config.dataDir);
    const bootstrapped = await bootstrapLocalIntegration(store.integrations, clock);
    if (bootstrapped) printFirstStartBanner(bootstrapped.key, config.http);
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

  const app = await buildApp({
    config: {
      mode: config.mode,
      bodyLimitBytes: config.http.bodyLimitBytes,
      metricsEnabled: config.metricsEnabled,
      authCacheMs: config.authCacheMs,
      adminToken,
    },
    db,
    store,
    clock,
    logger,
    redis,
  });

  closeWithGrace({ delay: config.http.shutdownGraceMs, logger: false }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'shutting down after an unexpected error');
    else logger.info({ signal }, 'shutting down: finishing in-flight requests');
    await app.close();
    redis?.disconnect();
    await db.close();
    logger.info('stopped');
  });

  const address = await app.listen({ port: config.http.port, host: config.http.host });
  logger.info(
    { url: address, store: storeDescription, mode: config.mode, rateLimits: redis ? 'redis' : 'in-process' },
    `Transfer Router listening on ${address} (store: ${storeDescription})`,
  );
}

async function openDatabase(config: ReturnType<typeof loadConfig>): Promise<{ db: Db; description: string }> {
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

function printFirstStartBanner(key: string, http: { host: string; port: number }) {
  const base = `http://${http.host.includes(':') ? `[${http.host}]` : http.host}:${http.port}`;
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

main().catch((error) => {
  if (error instanceof ConfigError) console.error(error.message);
  else console.error(error);
  process.exit(1);
});
