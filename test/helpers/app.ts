import { randomBytes } from 'node:crypto';
import type { Address } from '@solana/kit';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { createMintLookup, createSolCostEstimator } from '../../src/chain/quote-reads.ts';
import { ROUTER_PROGRAM_ADDRESS } from '../../src/chain/router/program.ts';
import { createRpcChain } from '../../src/chain/rpc-chain.ts';
import { createManualClock } from '../../src/domain/clock.ts';
import { DEFAULT_FEE_SCHEDULE } from '../../src/domain/fees.ts';
import { type AppDeps, buildApp } from '../../src/http/app.ts';
import { createPlatformAdmin } from '../../src/platform/admin.ts';
import { generatePlatformKeys } from '../../src/platform/local-keys.ts';
import {
  createPlatform,
  type Platform,
  type PlatformKeys,
  type PlatformSettings,
  priorityFeePolicy,
} from '../../src/platform/platform.ts';
import { fundLocalWallets, localRouterDeployment, setUpLocalPlatform } from '../../src/platform/startup.ts';
import { createPriceResolverFromConfig } from '../../src/prices/resolver.ts';
import { createListScreening } from '../../src/screening/providers.ts';
import type { Db } from '../../src/store/db.ts';
import { createStore, type Store } from '../../src/store/index.ts';
import { createSecretBox } from '../../src/store/secret-box.ts';
import { startWorkerPresence } from '../../src/store/worker-processes.ts';
import { createRouteScreening, type ScreeningProvider } from '../../src/use-cases/screening.ts';
import { createWebhookSender } from '../../src/webhooks/sender.ts';
import { createDeploymentReconciler } from '../../src/workers/deployment-reconciler.ts';
import { createKeeperWorker } from '../../src/workers/keeper.ts';
import { createOverdueRouteWorker } from '../../src/workers/overdue-routes.ts';
import { startTestChain, type TestChain } from './chain.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
export const ADMIN_HEADERS = { authorization: `Bearer ${ADMIN_TOKEN}` };
/** One deployment's key for secrets at rest: apps and processes sharing a database share it too. */
export const ENCRYPTION_KEY = randomBytes(32);

export interface TestApp {
  app: FastifyInstance;
  database: TestDatabase;
  store: Store;
  clock: ReturnType<typeof createManualClock>;
  /** The embedded chain (following the test's clock); the app reads it through its endpoint, as the service does. */
  chain: TestChain;
  /** The platform on that chain: router deployed, wallets funded, config initialised (unless asked otherwise). */
  platform: Platform;
  /** The deployment reconciler over this app's store and chain (not running: call `runOnce`). */
  reconciler: ReturnType<typeof createDeploymentReconciler>;
  /** This app's worker process in the worker register: workers of the app name it in their claims. */
  worker: string;
  /** A keeper worker over this app's store and chain (not running: call `runOnce`). */
  keeper: ReturnType<typeof createKeeperWorker>;
  /** The sweep of routes past their deadline over this app's store and chain (not running: call `runOnce`). */
  overdue: ReturnType<typeof createOverdueRouteWorker>;
  /** Creates an integration (through the admin API) and returns it. */
  createIntegration(settings?: Record<string, unknown>): Promise<{ id: number }>;
  /** Creates an API key for an integration (through the admin API). */
  createKey(integrationId: number, mode?: 'test' | 'live'): Promise<{ id: number; key: string }>;
  /** A fresh integration with one key: the usual caller of a test. */
  newCaller(mode?: 'test' | 'live', settings?: Record<string, unknown>): Promise<Caller>;
  close(): Promise<void>;
}

/** An integration's key and helpers to call the API with it. */
export interface Caller {
  integrationId: number;
  keyId: number;
  key: string;
  headers: Record<string, string>;
  get(url: string): Promise<LightMyRequestResponse>;
  /** POSTs JSON with a fresh Idempotency-Key unless one is given in `headers`. */
  post(url: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  delete(url: string): Promise<LightMyRequestResponse>;
}

export type TestAppOptions = Partial<
  Pick<AppDeps, 'mints' | 'solCosts' | 'readinessChecks' | 'rateLimitNamespace' | 'logger'>
> & {
  redis?: Redis;
  /** A database shared with another app (as two processes share one); otherwise a fresh one. */
  database?: TestDatabase;
  /**
   * Another app of the same deployment, as a second process is: this app shares its database,
   * chain, platform and clock (and leaves closing them to it).
   */
  peer?: TestApp;
  /** The deployment's encryption key (ENCRYPTION_KEY unless a test gives another). */
  encryptionKey?: Buffer;
  /** Lets a test interpose on the database (e.g. to simulate an outage). */
  wrapDb?: (db: Db) => Db;
  /** The endpoint the app reads and sends through (e.g. a fault proxy before the test chain); the chain's own by default. */
  chainRpcUrl?: string;
  authCacheMs?: number;
  /** Connections of the app's pool (10 unless a test needs fewer). */
  poolSize?: number;
  config?: Partial<AppDeps['config']>;
  /** How the platform is set up on the test chain (by default as local mode does). */
  platform?: {
    /** The platform's keys (fresh ones by default). */
    keys?: PlatformKeys;
    settings?: Partial<PlatformSettings>;
    /** Initialise the protocol config (default true). */
    initialised?: boolean;
    /** The router program's upgrade authority (default the platform admin; null: none). */
    upgradeAuthority?: Address | null;
    /** Screens routes when the platform requires it (a deny list of none by default). */
    screening?: ScreeningProvider;
  };
};

/** A fresh key for idempotent POSTs. */
export const idempotencyKey = () => `test-${randomBytes(8).toString('hex')}`;

/** The embedded chain following `clock`, with the platform set up on it as local mode does. */
async function startTestPlatform(
  clock: ReturnType<typeof createManualClock>,
  options: TestAppOptions['platform'] = {},
): Promise<{ chain: TestChain; platform: Platform }> {
  const platform = await createPlatform({
    keys: options.keys ?? generatePlatformKeys(),
    programAddress: ROUTER_PROGRAM_ADDRESS,
    settings: {
      cluster: 'localnet',
      screeningRequired: false,
      routeGraceSeconds: 3600,
      priorityFeeCapMicroLamportsPerCu: 1_000_000n,
      hopPriorityBudgetMultiplier: 8,
      ...options.settings,
    },
  });
  const upgradeAuthority =
    options.upgradeAuthority === undefined ? platform.admin.address : options.upgradeAuthority;
  const chain = await startTestChain({
    autoTick: false,
    clock,
    programs: [await localRouterDeployment(platform.programAddress, upgradeAuthority)],
  });
  const setUp = {
    chain: chain.chain,
    airdrop: chain.cheats.airdrop,
    platform,
    platformAdmin: createPlatformAdmin({ chain: chain.chain, platform }),
    log: pino({ level: 'silent' }),
  };
  if (options.initialised === false) await fundLocalWallets(setUp);
  else if ((await setUpLocalPlatform(setUp)).config !== 'initialized')
    throw new Error('the test platform could not be initialised');
  return { chain, platform };
}

/** Builds the real app on a fresh PostgreSQL database, with a manual clock. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const peer = options.peer;
  const database =
    peer?.database ?? options.database ?? (await createTestDatabase({ poolSize: options.poolSize ?? 10 }));
  const db = options.wrapDb ? options.wrapDb(database.db) : database.db;
  const clock = peer?.clock ?? createManualClock(new Date('2026-06-01T12:00:00.000Z'));
  const { chain, platform } = peer ?? (await startTestPlatform(clock, options.platform));
  const appChain = options.chainRpcUrl ? createRpcChain({ rpcUrl: options.chainRpcUrl }) : chain.chain;
  const platformAdmin = createPlatformAdmin({ chain: appChain, platform });
  const secrets = createSecretBox(options.encryptionKey ?? ENCRYPTION_KEY);
  const store = createStore(db, { idempotencyTtlMs: 24 * 3600 * 1000, secrets });
  // Unwrapped: a test's faults in the database are for the code under test, not for its register.
  const presence = await startWorkerPresence(database.db, pino({ level: 'silent' }));
  const webhookPolicy = options.config?.webhookPolicy ?? { requireHttps: false, allowPrivateNetworks: true };
  const sender = createWebhookSender(webhookPolicy);
  const app = await buildApp({
    config: {
      bodyLimitBytes: 64 * 1024,
      timeouts: { requestMs: 30_000, headersMs: 10_000, keepAliveMs: 72_000 },
      metricsEnabled: true,
      authCacheMs: options.authCacheMs ?? 30_000,
      adminToken: ADMIN_TOKEN,
      quoteTtlMs: 15 * 60 * 1000,
      feeSchedule: DEFAULT_FEE_SCHEDULE,
      webhookPolicy,
      // Browser tests sign in and act many times a minute; tests of the limits set them low.
      consoleSignInsPerMinute: 1_000,
      consoleActionsPerMinute: 1_000,
      ...options.config,
    },
    db,
    store,
    secrets,
    clock,
    logger: options.logger ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    redis: options.redis,
    rateLimitNamespace: options.rateLimitNamespace ?? `test-rl-${randomBytes(6).toString('hex')}`,
    prices: createPriceResolverFromConfig({ sources: ['fixed'] }, { clock }),
    mints: options.mints ?? createMintLookup(appChain),
    solCosts:
      options.solCosts ??
      createSolCostEstimator({ chain: appChain, priorityFees: priorityFeePolicy(platform, 0n) }),
    webhookSender: sender,
    chain: appChain,
    priorityFeeFloorMicroLamportsPerCu: 0n,
    platform,
    platformAdmin,
    ...(options.readinessChecks ? { readinessChecks: options.readinessChecks } : {}),
  });
  await app.ready();

  const adminPost = async (url: string, payload: unknown) => {
    const response = await app.inject({
      method: 'POST',
      url,
      headers: ADMIN_HEADERS,
      payload: payload as object,
    });
    if (response.statusCode !== 200)
      throw new Error(`${url} failed: ${response.statusCode} ${response.body}`);
    return response.json();
  };

  const testApp: TestApp = {
    app,
    database,
    store,
    clock,
    chain,
    platform,
    worker: presence.id,
    keeper: createKeeperWorker({
      worker: presence.id,
      db,
      listen: db,
      chain: chain.chain,
      hops: store.hops,
      transfers: store.transfers,
      programAddress: platform.programAddress,
      priorityFees: priorityFeePolicy(platform, 0n),
      screen: createRouteScreening({
        provider: options.platform?.screening ?? createListScreening([]),
        db,
        chain: chain.chain,
        platform,
        transfers: store.transfers,
        clock,
      }),
      clock,
      pollMs: 20,
      log: pino({ level: 'silent' }),
    }),
    overdue: createOverdueRouteWorker({
      db,
      chain: chain.chain,
      hops: store.hops,
      transfers: store.transfers,
      programAddress: platform.programAddress,
      clock,
      log: pino({ level: 'silent' }),
    }),
    reconciler: createDeploymentReconciler({
      db,
      chain: chain.chain,
      deployments: store.deployments,
      transfers: store.transfers,
      programAddress: platform.programAddress,
      clock,
      log: pino({ level: 'silent' }),
    }),
    createIntegration: (settings) =>
      adminPost('/admin/v1/integrations', {
        name: `integration-${randomBytes(3).toString('hex')}`,
        ...(settings ? { settings } : {}),
      }),
    createKey: (integrationId, mode = 'test') =>
      adminPost(`/admin/v1/integrations/${integrationId}/keys`, { mode }),
    async newCaller(mode = 'test', settings) {
      const integration = await testApp.createIntegration(settings);
      const key = await testApp.createKey(integration.id, mode);
      return callerFor(app, integration.id, key);
    },
    async close() {
      await app.close();
      await sender.close();
      await presence.stop();
      if (peer) return;
      await chain.close();
      if (!options.database) await database.drop();
    },
  };
  return testApp;
}

/** Helpers to call the API as the holder of `key`. */
export function callerFor(
  app: FastifyInstance,
  integrationId: number,
  key: { id: number; key: string },
): Caller {
  const headers = { 'x-api-key': key.key };
  return {
    integrationId,
    keyId: key.id,
    key: key.key,
    headers,
    get: (url) => app.inject({ method: 'GET', url, headers }),
    post: (url, body, extra = {}) =>
      app.inject({
        method: 'POST',
        url,
        headers: { ...headers, 'idempotency-key': idempotencyKey(), ...extra },
        ...(body === undefined ? {} : { payload: body as object }),
      }),
    delete: (url) => app.inject({ method: 'DELETE', url, headers }),
  };
}

export const SOL_MINT = 'So11111111111111111111111111111111111111112';
const SOURCE = 'Vote111111111111111111111111111111111111111';
const RECIPIENT = 'Stake11111111111111111111111111111111111111';

/** Creates a transfer (a quote, with its `transfer.quote_created` event) through the API. */
export async function createTransfer(caller: Caller, externalId?: string): Promise<{ id: number }> {
  const response = await caller.post('/api/v1/transfers', {
    tokenMint: SOL_MINT,
    amountRaw: '2000000000',
    amountTokens: '2',
    sourceOwner: SOURCE,
    recipientWallet: RECIPIENT,
    hops: 3,
    ...(externalId ? { externalId } : {}),
  });
  if (response.statusCode !== 200) throw new Error(`create failed: ${response.body}`);
  return response.json();
}
