import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { createSolanaRpc, generateKeyPairSigner, type KeyPairSigner, none, some } from '@solana/kit';
import { getMintEncoder, getMintSize, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { type ChainProfile, chainProfileFromEnv, startLocalChain } from '@transfer-router/local-chain';
import { rpcCall } from '@transfer-router/local-chain/testing';
import { pino } from 'pino';
import {
  createTransferRouterClient,
  type PreparedTransactionBundle,
  signAndBroadcastBundle,
} from '../../clients/typescript/src/index.ts';
import { ROUTER_PROGRAM_ADDRESS } from '../../src/chain/router/program.ts';
import { createRpcChain } from '../../src/chain/rpc-chain.ts';
import type { Chain } from '../../src/chain/types.ts';
import type { Clock } from '../../src/domain/clock.ts';
import { createPlatformAdmin } from '../../src/platform/admin.ts';
import { generatePlatformKeys } from '../../src/platform/local-keys.ts';
import { createPlatform, type PlatformKeys } from '../../src/platform/platform.ts';
import { localRouterDeployment, setUpLocalPlatform } from '../../src/platform/startup.ts';
import { KEEPER_CHANNEL } from '../../src/store/channels.ts';
import { createStore, type Store } from '../../src/store/index.ts';
import { createSecretBox } from '../../src/store/secret-box.ts';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/database.ts';
import { type ServiceProcess, startServiceProcess } from '../../test/helpers/process.ts';
import { processCpuMs } from './cpu.ts';

/**
 * The setting of the keeper benches: one service process (API and the embedded chain, its workers
 * off) on a scratch PostgreSQL database, routes deployed through its API as an integrator does with
 * the TypeScript client (create, prepare, then `signAndBroadcastBundle`: the source's wallet signs
 * each group, lands it and reports it, confirm-broadcast twice), and worker
 * processes (`npm run worker`: `node src/main.ts --workers-only`) on the same database, pointed at
 * the embedded chain's JSON-RPC endpoint with `RPC_URL`. All processes share the platform keys and
 * `ENCRYPTION_KEY` (the keeper keys are sealed with it).
 */

/**
 * A transfer prepared through the API, its bundle not yet signed: its route's schedule counts from
 * the chain's clock when prepare built it.
 */
export interface PreparedRoute {
  id: number;
  source: KeyPairSigner;
  bundle: PreparedTransactionBundle;
}

/** A route deployed through the API: status `processing`, the keeper's from its first due hop. */
export interface DeployedRoute {
  id: number;
  hops: number;
  /** When its last hop is due, chain unix seconds: the transfer's target arrival. */
  arrivalAt: number;
}

export interface KeeperBench {
  service: ServiceProcess;
  database: TestDatabase;
  /** The embedded chain's JSON-RPC endpoint, served by the service process. */
  rpcUrl: string;
  /** The service's chain client over that endpoint. */
  chain: Chain;
  /** The chain's clock, when the chain runs in this process. */
  chainClock: BenchClock | undefined;
  /** The chain's profile (LOCAL_CHAIN_PROFILE, LOCAL_CHAIN_SEED), when the chain runs in this process. */
  profile: ChainProfile | undefined;
  store: Store;
  /** A raw JSON-RPC call to the endpoint (the cheat methods too). */
  rpc(method: string, params: unknown[]): Promise<unknown>;
  /**
   * The chain's time, unix milliseconds (the chain in this process only): its clock, moved on by
   * every time travel and every `nextSlot`, so ahead of `chainClock` by all of those.
   */
  chainTimeMs(): number;
  /** Moves the chain's time forward to `unixMs`, a new slot starting there. */
  travelTo(unixMs: number): Promise<void>;
  /**
   * Makes a new slot while the chain's clock stands still, moving the chain's time on by a
   * millisecond (the chain in this process only): a mainnet-like chain includes sent transactions
   * in later slots.
   */
  nextSlot(): void;
  /**
   * Creates `count` funded transfers of `hops` hops arriving `arrivalSeconds` after prepare, and
   * deploys them, `concurrency` at a time; `onDeployed` sees each as it is taken over.
   */
  deploy(options: {
    count: number;
    hops: number;
    arrivalSeconds: number;
    concurrency?: number;
    onDeployed?(route: DeployedRoute): void;
  }): Promise<DeployedRoute[]>;
  /**
   * The first half of `deploy`: creates and prepares `count` funded transfers, `concurrency` at a
   * time, so that their schedules count from the chain's clock now; `land` deploys them.
   */
  prepare(options: {
    count: number;
    hops: number;
    arrivalSeconds: number;
    concurrency?: number;
  }): Promise<PreparedRoute[]>;
  /** The second half of `deploy`: signs, lands and reports each bundle, `concurrency` at a time. */
  land(routes: readonly PreparedRoute[], options?: { concurrency?: number }): Promise<DeployedRoute[]>;
  /** Starts `npm run worker` processes and resolves once each runs its workers. */
  startWorkers(count: number, env?: Record<string, string>): Promise<WorkerProcess[]>;
  /** Wakes the keeper workers as a takeover does (NOTIFY on the keeper channel). */
  wakeKeepers(): Promise<void>;
  /**
   * CPU the PostgreSQL backends serving the worker processes have used so far, by backend; a
   * measurement subtracts one reading from a later one (backends opened in between count whole).
   */
  workerBackendsCpuMs(): Promise<Map<number, number>>;
  /**
   * Resolves once every transfer of `ids` is `completed`, with the latest `completedAt` (the
   * workers' clock); throws if one fails or `timeoutMs` passes first.
   */
  waitCompleted(ids: readonly number[], timeoutMs: number): Promise<Date>;
  close(): Promise<void>;
}

export interface WorkerProcess {
  pid: number;
  logs: string[];
  /** Suspends the process (SIGSTOP): it takes no work until resumed. */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * A clock that follows the system clock, or stands still, or runs slower; it never goes back. The
 * chain's time is this clock plus however far time travel moved the chain on.
 */
export interface BenchClock extends Clock {
  /** Stops it where it is. */
  stop(): void;
  /** Lets it run again from where it stood, at the system clock's pace. */
  start(): void;
  /** Runs it from where it is at `rate` times the system clock's pace (0 stands it still). */
  run(rate: number): void;
}

function createBenchClock(): BenchClock {
  // It read `fromMs` at the system's `atMs`, and runs at `rate` from there.
  let atMs = Date.now();
  let fromMs = atMs;
  let rate = 1;
  const nowMs = () => fromMs + (Date.now() - atMs) * rate;
  const run = (next: number) => {
    fromMs = nowMs();
    atMs = Date.now();
    rate = next;
  };
  return {
    now: () => new Date(Math.floor(nowMs())),
    stop: () => run(0),
    start: () => run(1),
    run,
  };
}

/**
 * The embedded chain in this process, on a clock the bench can stop, with the chain profile the
 * environment names and the platform set up on it as local mode does it; the service then reaches
 * it with RPC_URL, as the workers do.
 */
async function startChainHere(keys: PlatformKeys) {
  const clock = createBenchClock();
  const profile = chainProfileFromEnv();
  const platform = await createPlatform({
    keys,
    programAddress: ROUTER_PROGRAM_ADDRESS,
    settings: {
      cluster: 'localnet',
      screeningRequired: false,
      routeGraceSeconds: 3600,
      priorityFeeCapMicroLamportsPerCu: 1_000_000n,
      hopPriorityBudgetMultiplier: 8,
    },
  });
  const local = await startLocalChain({
    rpcPort: 0,
    wsPort: null,
    clock,
    profile,
    programs: [await localRouterDeployment(platform.programAddress, platform.admin.address)],
  });
  const chain = createRpcChain({ rpcUrl: local.rpcUrl });
  await setUpLocalPlatform({
    chain,
    airdrop: local.cheats.airdrop,
    platform,
    platformAdmin: createPlatformAdmin({ chain, platform }),
    log: pino({ level: 'silent' }),
  });
  return { local, clock, profile };
}

/**
 * Starts the service on a scratch database and sets up an integration and a USDC-like mint. The
 * embedded chain runs in the service process, or with `chainHere` in this one, where `chainClock`
 * can stop it.
 */
export async function startKeeperBench(options: { chainHere?: boolean } = {}): Promise<KeeperBench> {
  const database = await createTestDatabase({ poolSize: 4 });
  const encryptionKey = randomBytes(32);
  const adminToken = `bench-admin-${randomBytes(12).toString('hex')}`;
  const platformKeys = generatePlatformKeys();
  const keygen = (role: keyof PlatformKeys) => JSON.stringify(platformKeys[role].toKeygenArray());
  const shared = {
    DATABASE_URL: database.url,
    ENCRYPTION_KEY: encryptionKey.toString('hex'),
    PLATFORM_ADMIN_KEYPAIR: keygen('admin'),
    SCREENING_AUTHORITY_KEYPAIR: keygen('screeningAuthority'),
    PLATFORM_FEE_KEYPAIR: keygen('feeWallet'),
  };
  const here = options.chainHere ? await startChainHere(platformKeys) : undefined;
  // Workers off: the keeper runs only in the worker processes a measurement starts.
  const service = await startServiceProcess({
    ...shared,
    ...(here ? { RPC_URL: here.local.rpcUrl, CLUSTER: 'localnet' } : {}),
    ADMIN_TOKEN: adminToken,
    LOG_LEVEL: 'warn',
    WORKERS_ENABLED: 'false',
  }).catch(async (error) => {
    await here?.local.close();
    await database.drop();
    throw error;
  });
  const rpcUrl =
    here?.local.rpcUrl ??
    /"chain":"(http:\/\/[^"]+)"/.exec(
      service.logs.find((line) => line.includes('Transfer Router listening'))!,
    )![1]!;
  const chain = createRpcChain({ rpcUrl });
  const store = createStore(database.db, {
    idempotencyTtlMs: 60_000,
    secrets: createSecretBox(encryptionKey),
  });
  const workers = new Set<WorkerProcess>();

  const rpc = (method: string, params: unknown[]) => rpcCall(rpcUrl, method, params);
  const call = async <T>(
    path: string,
    headers: Record<string, string>,
    body?: unknown,
    method: 'GET' | 'POST' = 'POST',
  ): Promise<T> => {
    const response = await fetch(`${service.url}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  };

  try {
    const admin = { authorization: `Bearer ${adminToken}` };
    const integration = await call<{ id: number }>('/admin/v1/integrations', admin, {
      name: 'bench',
      settings: { rateLimitMultiplier: 100_000 },
    });
    const { key } = await call<{ key: string }>(`/admin/v1/integrations/${integration.id}/keys`, admin, {
      mode: 'test',
    });
    const client = createTransferRouterClient({ baseUrl: service.url, apiKey: key });
    const wallet = createSolanaRpc(rpcUrl);

    // A USDC-like mint, set on chain as surfnet_setAccount does it.
    const mint = (await generateKeyPairSigner()).address;
    await rpc('surfnet_setAccount', [
      mint,
      {
        lamports: Number(await rpc('getMinimumBalanceForRentExemption', [getMintSize()])),
        owner: TOKEN_PROGRAM_ADDRESS,
        data: Buffer.from(
          getMintEncoder().encode({
            mintAuthority: some((await generateKeyPairSigner()).address),
            supply: 0n,
            decimals: 6,
            isInitialized: true,
            freezeAuthority: none(),
          }),
        ).toString('hex'),
      },
    ]);

    /** One transfer from a funded source to its recipient, created and prepared as an integrator does. */
    async function prepareOne(hops: number, arrivalSeconds: number): Promise<PreparedRoute> {
      const source: KeyPairSigner = await generateKeyPairSigner();
      // Account writes: the source is funded at once, whatever the chain's profile.
      await rpc('surfnet_setAccount', [source.address, { lamports: 20_000_000_000 }]);
      await rpc('surfnet_setTokenAccount', [source.address, mint, { amount: 1_000_000_000 }]);
      const created = await client.createTransfer({
        tokenMint: mint,
        amountRaw: '250000000',
        amountTokens: '250',
        hops,
        arrivalSeconds,
        tokenPriceUsd: 1,
        sourceOwner: source.address,
        recipientWallet: (await generateKeyPairSigner()).address,
      });
      const { preparedTxs } = await client.prepareTransfer(created.id);
      return { id: created.id, source, bundle: preparedTxs };
    }

    /** A prepared transfer's bundle signed by its source, landed and reported, as the client does it. */
    async function landOne(route: PreparedRoute): Promise<DeployedRoute> {
      const { transfer } = await signAndBroadcastBundle(client, {
        transferId: route.id,
        signer: route.source,
        rpc: wallet,
        bundle: route.bundle,
      });
      if (transfer.status !== 'processing') throw new Error(`transfer ${route.id} is ${transfer.status}`);
      const { rows } = await database.db.query<{ hops: number; arrival_at: string }>(
        'SELECT hops, first_release_at + (hops - 1) * interval_seconds AS arrival_at FROM transfers WHERE id = $1',
        [route.id],
      );
      return { id: route.id, hops: rows[0]!.hops, arrivalAt: Number(rows[0]!.arrival_at) };
    }

    const ledger = () => {
      if (!here) throw new Error('the chain runs in another process');
      return here.local.ledger;
    };
    return {
      service,
      database,
      rpcUrl,
      chain,
      chainClock: here?.clock,
      profile: here?.profile,
      store,
      rpc,
      chainTimeMs: () => ledger().chainTimeMs(),
      async travelTo(unixMs) {
        // In this process straight to the ledger: a mainnet-like endpoint may refuse the call.
        if (here) here.local.ledger.timeTravel({ absoluteTimestamp: unixMs });
        else await rpc('surfnet_timeTravel', [{ absoluteTimestamp: unixMs }]);
      },
      nextSlot() {
        ledger().timeTravel({ absoluteTimestamp: ledger().chainTimeMs() + 1 });
      },
      deploy: ({ count, hops, arrivalSeconds, concurrency = 4, onDeployed }) =>
        pooled(count, concurrency, async () => {
          const route = await landOne(await prepareOne(hops, arrivalSeconds));
          onDeployed?.(route);
          return route;
        }),
      prepare: ({ count, hops, arrivalSeconds, concurrency = 4 }) =>
        pooled(count, concurrency, () => prepareOne(hops, arrivalSeconds)),
      land: (routes, { concurrency = 4 } = {}) =>
        pooled(routes.length, concurrency, (i) => landOne(routes[i]!)),
      async startWorkers(count, env = {}) {
        const started = await Promise.all(
          Array.from({ length: count }, () =>
            startWorkerProcess({
              ...shared,
              RPC_URL: rpcUrl,
              CLUSTER: 'localnet',
              LOG_LEVEL: 'warn',
              // Several on one host: each serves its metrics on a free port.
              METRICS_PORT: '0',
              ...env,
            }),
          ),
        );
        for (const worker of started) {
          workers.add(worker);
          const stop = worker.stop;
          worker.stop = async () => {
            workers.delete(worker);
            await stop();
          };
        }
        return started;
      },
      async wakeKeepers() {
        await database.db.query(`SELECT pg_notify($1, '')`, [KEEPER_CHANNEL]);
      },
      async workerBackendsCpuMs() {
        const { rows } = await database.db.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND application_name LIKE 'transfer-router worker %'`,
        );
        return new Map(rows.map(({ pid }) => [pid, processCpuMs(pid)]));
      },
      async waitCompleted(ids, timeoutMs) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const { rows } = await database.db.query<{ done: number; failed: number; last: Date | null }>(
            `SELECT count(*) FILTER (WHERE status = 'completed')::int AS done,
                    count(*) FILTER (WHERE status = 'failed')::int AS failed, max(completed_at) AS last
               FROM transfers WHERE id = ANY($1)`,
            [ids],
          );
          const { done, failed, last } = rows[0]!;
          if (done === ids.length) return last!;
          if (failed > 0) throw new Error(`${failed} of the transfers failed`);
          if (Date.now() > deadline) throw new Error(`${done} of ${ids.length} transfers completed in time`);
          await delay(100);
        }
      },
      async close() {
        for (const worker of [...workers]) await worker.stop();
        await service.stop();
        await here?.local.close();
        await database.drop();
      },
    };
  } catch (error) {
    await service.stop();
    await here?.local.close();
    await database.drop();
    throw error;
  }
}

/** Runs `task` `count` times, `concurrency` at a time; answers in the order they finished. */
async function pooled<T>(
  count: number,
  concurrency: number,
  task: (index: number) => Promise<T>,
): Promise<T[]> {
  const done: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) done.push(await task(next++));
    }),
  );
  return done;
}

/** `node src/main.ts --workers-only` (what `npm run worker` runs), resolved once its workers run. */
async function startWorkerProcess(env: Record<string, string>): Promise<WorkerProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tr-bench-worker-'));
  const child: ChildProcess = spawn(process.execPath, ['src/main.ts', '--workers-only'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? tmpdir(),
      MODE: 'local',
      DATA_DIR: dataDir,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        logs.push(line);
        if (line.includes('Transfer Router workers running')) resolve();
      });
    }
    void exited.then((code) => reject(new Error(`worker exited with ${code}:\n${logs.join('\n')}`)));
  });
  return {
    pid: child.pid!,
    logs,
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGTERM');
      }
      await exited;
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
