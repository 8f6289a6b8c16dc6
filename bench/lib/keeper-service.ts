import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { generateKeyPairSigner, type KeyPairSigner, none, some } from '@solana/kit';
import { getMintEncoder, getMintSize, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { startLocalChain } from '@transfer-router/local-chain';
import { pino } from 'pino';
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
import { type Bundle, broadcastBundle } from '../../test/helpers/wallet.ts';
import { processCpuMs } from './cpu.ts';

/**
 * The setting of the keeper benches: one service process (API and the embedded chain, its workers
 * off) on a scratch PostgreSQL database, routes deployed through its API as an integrator does
 * (create, prepare, the source's wallet signs and broadcasts, confirm-broadcast twice), and worker
 * processes (`npm run worker`: `node src/main.ts --workers-only`) on the same database, pointed at
 * the embedded chain's JSON-RPC endpoint with `RPC_URL`. All processes share the platform keys and
 * `ENCRYPTION_KEY` (the keeper keys are sealed with it).
 */

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
  chainClock: PausableClock | undefined;
  store: Store;
  /** A raw JSON-RPC call to the endpoint (the cheat methods too). */
  rpc(method: string, params: unknown[]): Promise<unknown>;
  /** The chain's unix time, seconds. */
  chainNow(): Promise<number>;
  /** Moves the chain's clock forward to `unix` seconds. */
  travelTo(unix: number): Promise<void>;
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

/** A clock that follows the system clock but can stand still; it never goes back. */
export interface PausableClock extends Clock {
  /** Stops it where it is. */
  stop(): void;
  /** Lets it run again from where it stood. */
  start(): void;
}

function createPausableClock(): PausableClock {
  let stoppedAt: number | undefined;
  let behindMs = 0;
  return {
    now: () => new Date((stoppedAt ?? Date.now()) - behindMs),
    stop() {
      stoppedAt ??= Date.now();
    },
    start() {
      if (stoppedAt === undefined) return;
      behindMs += Date.now() - stoppedAt;
      stoppedAt = undefined;
    },
  };
}

/**
 * The embedded chain in this process, on a clock the bench can stop, with the platform set up on
 * it as local mode does it; the service then reaches it with RPC_URL, as the workers do.
 */
async function startChainHere(keys: PlatformKeys) {
  const clock = createPausableClock();
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
  return { local, clock };
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

  const rpc = async (method: string, params: unknown[]) => {
    const response = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const answer = (await response.json()) as { error?: unknown; result?: unknown };
    if (answer.error) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
    return answer.result;
  };
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
    const api = { 'x-api-key': key };
    const idempotent = () => ({ ...api, 'idempotency-key': `bench-${randomBytes(8).toString('hex')}` });

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

    /** One transfer, from a funded source to its recipient, deployed as an integrator does. */
    async function deployOne(hops: number, arrivalSeconds: number): Promise<DeployedRoute> {
      const source: KeyPairSigner = await generateKeyPairSigner();
      await rpc('requestAirdrop', [source.address, 20_000_000_000]);
      await rpc('surfnet_setTokenAccount', [source.address, mint, { amount: 1_000_000_000 }]);
      const created = await call<{ id: number }>('/api/v1/transfers', idempotent(), {
        tokenMint: mint,
        amountRaw: '250000000',
        amountTokens: '250',
        hops,
        arrivalSeconds,
        tokenPriceUsd: 1,
        sourceOwner: source.address,
        recipientWallet: (await generateKeyPairSigner()).address,
      });
      const { preparedTxs } = await call<{ preparedTxs: Bundle }>(
        `/api/v1/transfers/${created.id}/prepare`,
        idempotent(),
      );
      const funding = await broadcastBundle(chain, source, preparedTxs, { through: 'keeperFunding' });
      await call(`/api/v1/transfers/${created.id}/confirm-broadcast`, idempotent(), {
        keeperFundingSignature: funding.keeperFundingSignature,
        routeInitSignatures: [],
      });
      const rest = await broadcastBundle(chain, source, { ...preparedTxs, keeperFundingTx: null });
      const { transfer } = await call<{ transfer: { status: string } }>(
        `/api/v1/transfers/${created.id}/confirm-broadcast`,
        idempotent(),
        { ...rest, keeperFundingSignature: funding.keeperFundingSignature },
      );
      if (transfer.status !== 'processing') throw new Error(`transfer ${created.id} is ${transfer.status}`);
      const { rows } = await database.db.query<{ arrival_at: string }>(
        'SELECT first_release_at + (hops - 1) * interval_seconds AS arrival_at FROM transfers WHERE id = $1',
        [created.id],
      );
      return { id: created.id, hops, arrivalAt: Number(rows[0]!.arrival_at) };
    }

    const chainNow = async () => Number((await chain.getClock()).unixTimestamp);
    return {
      service,
      database,
      rpcUrl,
      chain,
      chainClock: here?.clock,
      store,
      rpc,
      chainNow,
      async travelTo(unix) {
        await rpc('surfnet_timeTravel', [{ absoluteTimestamp: unix * 1000 }]);
      },
      async deploy({ count, hops, arrivalSeconds, concurrency = 4, onDeployed }) {
        const routes: DeployedRoute[] = [];
        let next = 0;
        await Promise.all(
          Array.from({ length: concurrency }, async () => {
            while (next < count) {
              next++;
              const route = await deployOne(hops, arrivalSeconds);
              routes.push(route);
              onDeployed?.(route);
            }
          }),
        );
        return routes;
      },
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
