import closeWithGrace from 'close-with-grace';
import { type DestinationStream, pino } from 'pino';
import { PinoPretty } from 'pino-pretty';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { DataDirInUseError } from './data-dir-lock.ts';
import { PlatformKeysError } from './platform/local-keys.ts';
import { PortUnavailableError } from './port-check.ts';
import { startService } from './service.ts';
import { describeLocalChainProfile } from './service-file.ts';
import { EncryptionKeyMismatchError } from './store/encryption-check.ts';

/**
 * `npm start`: the API and the workers in one process (`npm run worker` runs only the workers),
 * until SIGTERM/SIGINT, then a graceful stop: no new requests, in-flight ones finish, stores close.
 */
async function main() {
  const workersOnly = process.argv.includes('--workers-only');
  const config = loadConfig();
  if (workersOnly && !config.database.url) {
    throw new ConfigError([
      'a standalone worker needs DATABASE_URL (embedded PGlite belongs to one process)',
    ]);
  }
  const logger = pino(
    {
      level: config.logLevel,
      base: { service: 'transfer-router', pid: process.pid },
      redact: {
        paths: [
          '*.authorization',
          '*["x-api-key"]',
          '*.apiKey',
          '*.secret',
          '*.adminToken',
          '*.encryptionKey',
        ],
        censor: '[redacted]',
      },
    },
    logDestination(config),
  );
  const service = await startService(
    config,
    { api: !workersOnly, workers: workersOnly || config.workersEnabled },
    logger,
  );

  // Under `npm start`, one Ctrl-C arrives twice (from the terminal, and forwarded by npm), so a
  // repeated SIGINT/SIGTERM cannot mean "stop harder": it is ignored, and the grace delay bounds
  // the stop. (close-with-grace would exit at once on the second.)
  let stopping = false;
  const grace = closeWithGrace(
    { delay: config.http.shutdownGraceMs, logger: false, skip: ['SIGINT', 'SIGTERM'] },
    async ({ signal, err }) => {
      stopping = true;
      if (err) logger.error({ err }, 'shutting down after an unexpected error');
      else if (signal) logger.info({ signal }, 'shutting down: finishing in-flight work');
      await service.close();
      logger.info('stopped');
    },
  );
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'shutting down: finishing in-flight work');
      grace.close();
    });
  }

  // Where the service listens and which store it uses is always reported, whatever LOG_LEVEL says.
  const chain = service.localChainProfile
    ? `embedded (${describeLocalChainProfile(service.localChainProfile)}), RPC at ${service.localRpcUrl}`
    : config.chain.rpcUrl;
  logger.child({}, { level: 'info' }).info(
    {
      url: service.url,
      metrics: service.metricsUrl,
      store: service.storeDescription,
      chain: config.chain.rpcUrl ?? service.localRpcUrl,
      chainProfile: service.localChainProfile,
      cluster: config.chain.cluster,
      mode: config.mode,
      rateLimits: config.redisUrl ? 'redis' : 'in-process',
    },
    service.url
      ? `Transfer Router listening on ${service.url} (store: ${service.storeDescription}; chain: ${chain})`
      : `Transfer Router workers running (store: ${service.storeDescription}${service.metricsUrl ? `; metrics at ${service.metricsUrl}` : ''})`,
  );
}

/**
 * Where log lines go: standard output, as JSON lines (pino's own destination), or as readable
 * lines (time, level, component, message, then the fields) when the configuration says so, by
 * default at a terminal; those are written synchronously, so none is lost at a failed start's exit.
 */
function logDestination(config: Config): DestinationStream | undefined {
  if (config.logFormat === 'json') return undefined;
  return PinoPretty({
    sync: true,
    translateTime: 'SYS:HH:MM:ss.l',
    singleLine: true,
    ignore: 'pid,hostname,service,component',
    messageFormat: '{if component}{component}: {end}{msg}',
  });
}

main().catch((error) => {
  if (
    error instanceof ConfigError ||
    error instanceof DataDirInUseError ||
    error instanceof EncryptionKeyMismatchError ||
    error instanceof PlatformKeysError ||
    error instanceof PortUnavailableError
  )
    console.error(error.message);
  else console.error(error);
  process.exit(1);
});
