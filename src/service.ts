import { existsSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { chainProfile, startLocalChain } from '@transfer-router/local-chain';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { ensureLocalEncryptionKey } from './bootstrap.ts';
import { ROUTER_PROGRAM_ADDRESS } from './chain/router/program.ts';
import { createRpcChain } from './chain/rpc-chain.ts';
import type { Chain } from './chain/types.ts';
import type { Config } from './config.ts';
import { DataDirInUseError, type DataDirLock, dataDirHolder, lockDataDir } from './data-dir-lock.ts';
import { type Clock, systemClock } from './domain/clock.ts';
import { createPlatformAdmin, type PlatformAdmin } from './platform/admin.ts';
import { ensureLocalPlatformKeys, platformKeysPath } from './platform/local-keys.ts';
import { createPlatform, type Platform, type PlatformKeys } from './platform/platform.ts';
import { localRouterDeployment, reportPlatform, setUpLocalPlatform } from './platform/startup.ts';
import {
  chainPortError,
  checkPortsFree,
  freePortSettings,
  type PortClaim,
  servicePorts,
} from './port-check.ts';
import { describeLocalChainProfile, type LocalChainProfile, readServiceFile } from './service-file.ts';
import { createPgliteDb, createPostgresDb, type Db } from './store/db.ts';
import { verifyEncryptionKey } from './store/encryption-check.ts';
import { createStore } from './store/index.ts';
import { migrate } from './store/migrate.ts';
import { createSecretBox, parseEncryptionKey, type SecretBox } from './store/secret-box.ts';
import { createWebhookSender } from './webhooks/sender.ts';
import { apiRole, metricsRole } from './wiring/api.ts';
import { connectionName, createShutdown, type ServiceParts } from './wiring/parts.ts';
import { startWorkers } from './wiring/workers.ts';

/** Which roles a process runs: the HTTP API, the background workers, or both (`npm start`). */
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
  /** The embedded chain's profile and seed, when it runs. */
  localChainProfile: LocalChainProfile | undefined;
  /** The router program, protocol config, platform keys and route settings. */
  platform: Platform;
  storeDescription: string;
  /** Stops accepting work, finishes what is in flight, then releases everything. */
  close(): Promise<void>;
}

/**
 * Starts the service from a validated configuration: takes its data directory, checks its ports,
 * opens the store, the chain (embedded in local mode, else over RPC) and the platform, then starts
 * the roles this process runs. What it started stops in reverse order at close (the data
 * directory last), or at once when the start fails.
 */
export async function startService(
  config: Config,
  roles: ServiceRoles,
  logger: Logger,
): Promise<RunningService> {
  const clock = systemClock;
  const ports = servicePorts(config, roles.api ? 'npm start' : 'npm run worker');
  // Without the API, the workers' metrics get an endpoint of their own.
  const metricsAlone = !roles.api && config.metricsEnabled;
  const claims = [
    ...(roles.api ? [ports.http] : []),
    ...(metricsAlone ? [ports.metrics] : []),
    ...ports.chain,
  ];
  // The data directory first: a second start on it stops here, before it opens anything there.
  const lock = await lockOwnDataDir(config, claims, ports.context.command);
  const shutdown = createShutdown(logger);
  if (lock) shutdown.add(lock.release);

  try {
    // A taken port stops the start here, before anything is migrated, started or created.
    await checkPortsFree(claims, ports.context);
    const storeDescription = describeDatabase(config);
    const progress = logger.child({ component: 'startup' });
    const applicationName = connectionName(roles.api);
    const db = await openDatabase(config, applicationName, storeDescription, progress);
    shutdown.add(() => db.close());
    const { store, secrets } = await openStore(config, db, progress);
    const platform = await createPlatform({
      keys: await loadPlatformKeys(config, secrets, progress),
      programAddress: config.chain.routerProgramId ?? ROUTER_PROGRAM_ADDRESS,
      settings: config.platform.settings,
    });
    const chain = await openChain(config, logger, clock, platform, progress).catch(async (error) => {
      throw await chainPortError(error, ports.chain, ports.context);
    });
    shutdown.add(chain.close);
    const platformAdmin = await preparePlatform(chain, platform, progress);
    const webhookSender = createWebhookSender(config.webhookPolicy);
    shutdown.add(() => webhookSender.close());

    const parts: ServiceParts = {
      config,
      clock,
      logger,
      progress,
      ports,
      db,
      applicationName,
      store,
      secrets,
      chain: chain.chain,
      localRpcUrl: chain.localRpcUrl,
      localChainProfile: chain.profile,
      onChainTimeTravel: chain.onTimeTravel,
      platform,
      platformAdmin,
      webhookSender,
      metrics: new Registry(),
      onStop: shutdown.add,
    };
    if (roles.workers) await startWorkers(parts);
    const metricsUrl = metricsAlone ? await metricsRole(parts) : undefined;
    const api = roles.api ? await apiRole(parts) : undefined;
    return {
      app: api?.app,
      url: api?.url,
      metricsUrl,
      localRpcUrl: chain.localRpcUrl,
      localChainProfile: chain.profile,
      platform,
      storeDescription,
      close: shutdown.run,
    };
  } catch (error) {
    await shutdown.run();
    throw error;
  }
}

/**
 * Takes the data directory for this process when it keeps something there that one process alone
 * may open (embedded PGlite, the embedded chain); with DATABASE_URL and RPC_URL, processes may
 * share it. Held by another process, the start is refused with who holds it, where that one
 * listens (its service.json), and a command that runs a second service beside it.
 */
async function lockOwnDataDir(
  config: Config,
  claims: PortClaim[],
  command: string,
): Promise<DataDirLock | undefined> {
  if (config.database.url && config.chain.rpcUrl) return undefined;
  try {
    return await lockDataDir(config.dataDir);
  } catch (error) {
    if (!(error instanceof DataDirInUseError)) throw error;
    const running = await readServiceFile(config.dataDir);
    const where =
      running?.pid === error.pid
        ? `: API at ${running.url}${running.rpcUrl ? `, chain JSON-RPC at ${running.rpcUrl}` : ''}`
        : '';
    const settings = (await freePortSettings(claims)).filter(([, value]) => value !== 0);
    const example = [
      `DATA_DIR=${await freeSibling(config.dataDir)}`,
      ...settings.map((pair) => pair.join('=')),
    ];
    throw new DataDirInUseError(
      error.dataDir,
      error.pid,
      `Cannot start: the data directory ${config.dataDir} is in use by another Transfer Router (pid ${error.pid}${where}). Stop it, or set DATA_DIR to another directory to run a second service beside it (e.g. \`${example.join(' ')} ${command}\`).`,
    );
  }
}

/** A sibling of `dataDir` no running service holds (`data-2`, `data-3`, ...), as a path to type. */
async function freeSibling(dataDir: string): Promise<string> {
  let candidate = `${dataDir}-2`;
  for (let n = 3; (await dataDirHolder(candidate)) !== null; n++) candidate = `${dataDir}-${n}`;
  const path = relative(process.cwd(), candidate);
  return path.startsWith('..') || isAbsolute(path) ? candidate : `./${path}`;
}

/** Where the configured database is, in words. */
function describeDatabase(config: Config): string {
  if (!config.database.url) return `embedded PGlite in ${join(config.dataDir, 'pglite')}`;
  const url = new URL(config.database.url);
  return `PostgreSQL at ${url.hostname}:${url.port || 5432}${url.pathname}`;
}

/** Opens the configured database: a PostgreSQL server, or embedded PGlite in the data directory. */
async function openDatabase(
  config: Config,
  applicationName: string,
  storeDescription: string,
  progress: Logger,
): Promise<Db> {
  // PGlite's first start creates its cluster, which takes seconds: say so rather than seem stuck.
  const creating = !config.database.url && !existsSync(join(config.dataDir, 'pglite', 'PG_VERSION'));
  progress.info(
    { step: 'database', store: storeDescription },
    creating
      ? `Starting: creating the database (${storeDescription}; the first time takes several seconds)`
      : `Starting: opening the database (${storeDescription})`,
  );
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
 * The store on a migrated database, sealing secrets with the configured encryption key (local
 * mode: the one generated in the data directory), which is checked against the database's.
 */
async function openStore(config: Config, db: Db, progress: Logger) {
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
  return { store, secrets };
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
 * deployed, behaving as its profile says (LOCAL_CHAIN_PROFILE, which RPC_URL makes moot). Either
 * way the service reads and sends through the same RPC client; only the local chain's airdrop
 * cheat is used in process.
 */
async function openChain(config: Config, logger: Logger, clock: Clock, platform: Platform, progress: Logger) {
  if (config.chain.rpcUrl) {
    if (config.chain.localProfile.name !== 'instant') {
      progress.warn(
        { step: 'chain' },
        `LOCAL_CHAIN_PROFILE=${config.chain.localProfile.name} is ignored: with RPC_URL no embedded chain runs`,
      );
    }
    return {
      chain: createRpcChain({ rpcUrl: config.chain.rpcUrl }) as Chain,
      localRpcUrl: undefined,
      profile: undefined,
      airdrop: undefined,
      onTimeTravel: undefined,
      close: async () => {},
    };
  }
  const profile = chainProfile(config.chain.localProfile.name, config.chain.localProfile.seed);
  progress.info(
    { step: 'chain', profile: profile.name, seed: profile.seed },
    `Starting: the local chain, ${describeLocalChainProfile(profile)} (loading its state, deploying the router program, opening its JSON-RPC port)`,
  );
  const local = await startLocalChain({
    profile,
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
    profile: { name: profile.name, seed: profile.seed },
    airdrop: local.cheats.airdrop,
    onTimeTravel: local.onTimeTravel,
    close: () => local.close(),
  };
}

/**
 * The platform's admin on the opened chain. On the embedded chain, it funds the platform's wallets
 * and sets up its protocol config first; on any other, it reports what the router program and
 * protocol config are.
 */
async function preparePlatform(
  chain: Awaited<ReturnType<typeof openChain>>,
  platform: Platform,
  progress: Logger,
): Promise<PlatformAdmin> {
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
    progress.info({ step: 'platform' }, 'Starting: checking the router program and protocol config on chain');
    await reportPlatform({ platformAdmin, platform, log: progress });
  }
  return platformAdmin;
}
