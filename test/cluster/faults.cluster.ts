// The service against a misbehaving Solana RPC endpoint: the chain in a process of its own, the
// fault-injecting proxy (packages/rpc-faults) between it and the service, one API process and two
// worker processes on one PostgreSQL. Wallets broadcast straight to the chain, as they do to their
// own RPC provider; everything the service reads or sends goes through the proxy. Once a third of
// the hops have run, a worker process is killed with SIGKILL (and another started, as a supervisor
// would). Transfers of 3 to 10 hops must all complete on time with exact balances, every hop once,
// every event delivered (twice only one the killed worker had in flight), no answer a 5xx. On the
// mainnet-like chain (LOCAL_CHAIN_PROFILE=mainnet, `npm run test:mainnet`), the chain itself drops,
// delays and forks transactions, prices congestion, serves commitment levels honestly, runs the
// legacy Token program and has an endpoint that throttles and lags, in place of the proxy's faults.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import {
  type Address,
  createSolanaRpc,
  generateKeyPairSigner,
  none,
  type Signature,
  some,
} from '@solana/kit';
import {
  findAssociatedTokenPda,
  getMintEncoder,
  getMintSize,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { BAD_DAY, type FaultPlan, type FaultProxy, startFaultProxy } from '@transfer-router/rpc-faults';
import { pino } from 'pino';
import {
  createTransferRouterClient,
  signAndBroadcastBundle,
  type TransferRouterClient,
} from '../../clients/typescript/src/index.ts';
import { decodeRoute } from '../../src/chain/router/accounts.ts';
import { ROUTER_PROGRAM_ADDRESS, routerProgramPath } from '../../src/chain/router/program.ts';
import { rawToTokens } from '../../src/domain/amounts.ts';
import { minArrivalSeconds } from '../../src/domain/fees.ts';
import { createPlatformAdmin } from '../../src/platform/admin.ts';
import { generatePlatformKeys } from '../../src/platform/local-keys.ts';
import { createPlatform, type PlatformKeys } from '../../src/platform/platform.ts';
import { setUpLocalPlatform } from '../../src/platform/startup.ts';
import { KEEPER_CHANNEL } from '../../src/store/channels.ts';
import { SOL_MINT } from '../helpers/app.ts';
import { type ChainProcess, startChainProcess } from '../helpers/chain-process.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { type ServiceProcess, startServiceProcess } from '../helpers/process.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

/** The mainnet-like chain misbehaves itself, its endpoint included (see packages/local-chain). */
const MAINNET = process.env.LOCAL_CHAIN_PROFILE === 'mainnet';
/**
 * The proxy's misbehaviour: a bad day's (RPC_FAULTS_SEED picks another draw of it), none in front
 * of the mainnet-like chain.
 */
const FAULTS: Partial<FaultPlan> = MAINNET
  ? {}
  : { ...BAD_DAY, seed: process.env.RPC_FAULTS_SEED ?? 'transfer-router' };
/**
 * The transfers, deployed together: FAULTS_TRANSFERS of them (default 12), of 3 to 10 hops, every
 * third in native SOL. Run on the mainnet-like chain (`npm run test:mainnet`), 200.
 */
const TRANSFERS = Array.from({ length: Number(process.env.FAULTS_TRANSFERS ?? 12) }, (_, i) => ({
  hops: 3 + (i % 8),
  native: i % 3 === 0,
}));
/** Users deploying at the same moment. */
const WALLETS = 20;
/**
 * On time: a transfer arrives (its last hop lands) within the shortest interval a route can have
 * between two hops (15 s, at the minimum arrival of 4 hops and more) of its due time, plus the 5 s
 * a killed worker's routes wait before its silence counts as death.
 */
const ON_TIME_MS = 20_000;
/** How often the chain's clock is moved on to the next due hop. */
const BEAT_MS = 400;
const ADMIN_TOKEN = 'faults-admin-token-0123456789abcdef';
const ENCRYPTION_KEY = 'c3'.repeat(32);

const keygen = (keys: PlatformKeys, role: keyof PlatformKeys) => JSON.stringify(keys[role].toKeygenArray());

interface Deployed {
  id: number;
  hops: number;
  mint: Address;
  recipient: Address;
  netDeliveredRaw: bigint;
}

describe('the service on a misbehaving RPC endpoint', () => {
  const keys = generatePlatformKeys();
  let chain: ChainProcess;
  let proxy: FaultProxy;
  let database: TestDatabase;
  let services: ServiceProcess[] = [];
  let receiver: Receiver;
  let client: TransferRouterClient;
  /** Every answer the API gave the client: method, path and status. */
  const answers: { request: string; status: number; error?: string }[] = [];
  /** Each move of the chain's clock: the wall time it was made, and the chain time it went to (ms). */
  const travels: { wallMs: number; chainMs: number }[] = [];
  let mint: Address;
  let deployed: Deployed[] = [];
  let shared: Record<string, string>;
  /** The events whose delivery the killed worker held: sent by it, perhaps received, not recorded. */
  let inFlightAtKill: string[] | undefined;
  /** When the worker was killed (wall time, ms). */
  let killedAt = 0;

  before(async () => {
    chain = await startChainProcess({
      programs: [{ programId: ROUTER_PROGRAM_ADDRESS, path: routerProgramPath('v0') }],
      upgradeAuthority: keys.admin.address,
    });
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
    const setUp = await setUpLocalPlatform({
      chain: chain.chain,
      airdrop: chain.airdrop,
      platform,
      platformAdmin: createPlatformAdmin({ chain: chain.chain, platform }),
      log: pino({ level: 'silent' }),
    });
    assert.equal(setUp.config, 'initialized');
    proxy = await startFaultProxy({ upstream: chain.rpcUrl, faults: FAULTS });
    database = await createTestDatabase({ poolSize: 2 });
    shared = {
      DATABASE_URL: database.url,
      DATABASE_POOL_SIZE: '4',
      ENCRYPTION_KEY,
      ADMIN_TOKEN,
      RPC_URL: proxy.url,
      CLUSTER: 'localnet',
      PLATFORM_ADMIN_KEYPAIR: keygen(keys, 'admin'),
      SCREENING_AUTHORITY_KEYPAIR: keygen(keys, 'screeningAuthority'),
      PLATFORM_FEE_KEYPAIR: keygen(keys, 'feeWallet'),
    };
    services = await Promise.all([
      startServiceProcess({ ...shared, WORKERS_ENABLED: 'false' }),
      startServiceProcess({ ...shared, METRICS_PORT: '0' }, { workersOnly: true }),
      startServiceProcess({ ...shared, METRICS_PORT: '0' }, { workersOnly: true }),
    ]);
    receiver = await startReceiver();
    const admin = async <T>(path: string, body: unknown): Promise<T> => {
      const response = await fetch(`${services[0]!.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(response.status, 200, await response.clone().text());
      return (await response.json()) as T;
    };
    const integration = await admin<{ id: number }>('/admin/v1/integrations', {
      name: 'faults',
      settings: { rateLimitMultiplier: 100 },
    });
    const { key } = await admin<{ key: string }>(`/admin/v1/integrations/${integration.id}/keys`, {
      mode: 'test',
    });
    client = createTransferRouterClient({
      baseUrl: services[0]!.url,
      apiKey: key,
      maxRetries: 5,
      async fetch(request) {
        const response = await fetch(request);
        answers.push({
          request: `${request.method} ${new URL(request.url).pathname}`,
          status: response.status,
          // What a 5xx said, for the assertion's message.
          ...(response.status >= 500 && { error: await response.clone().text() }),
        });
        return response;
      },
    });
    await client.createWebhook({ url: receiver.url });
    mint = await createMint(chain);
  });

  after(async () => {
    await Promise.all(services.map((service) => service.stop()));
    await receiver?.close();
    await proxy?.close();
    await chain?.stop();
    await database?.drop();
  });

  test('every transfer completes on time, each hop once, each event delivered once, no answer a 5xx', async () => {
    deployed = await deployAll(TRANSFERS);
    await carryToCompletion(deployed.map((transfer) => transfer.id));

    const { rows: transfers } = await database.db.query<{ id: string; status: string; phase: string }>(
      'SELECT id, status, phase FROM transfers WHERE id = ANY($1) ORDER BY id',
      [deployed.map((transfer) => transfer.id)],
    );
    assert.deepEqual(
      transfers.map((row) => [Number(row.id), row.status, row.phase]),
      deployed
        .map((transfer) => [transfer.id, 'completed', 'settled'])
        .sort((a, b) => Number(a[0]) - Number(b[0])),
      'every transfer completed, none failed',
    );
    for (const transfer of deployed) {
      assert.equal(
        await holding(transfer.recipient, transfer.mint),
        transfer.netDeliveredRaw,
        `transfer ${transfer.id}: the recipient holds the net amount exactly`,
      );
      await assertHopsRanOnce(transfer);
    }
    await assertEventsDeliveredOnce();
    assert.deepEqual(
      answers.filter((answer) => answer.status >= 500),
      [],
      'no API answer was a 5xx',
    );
    await assertLoggedHopsOnce();
    await assertOnTime();
    if (MAINNET) await assertClusterMisbehaved();
    else {
      const stats = proxy.stats();
      for (const fault of [
        'droppedSends',
        'rateLimited',
        'unavailable',
        'held',
        'staleAnswers',
        'processedShown',
      ] as const)
        assert.ok(stats[fault] > 0, `the endpoint misbehaved (${fault}): ${JSON.stringify(stats)}`);
    }
  });

  /** The mainnet-like chain dropped, delayed and forked transactions, and its endpoint throttled and lagged. */
  async function assertClusterMisbehaved() {
    const cluster = await chain.rpc<Record<string, number>>('localchain_clusterStats', []);
    const front = (await (await fetch(`${chain.rpcUrl}/faults`)).json()) as Record<string, number>;
    process.stderr.write(`the chain: ${JSON.stringify(cluster)}; its endpoint: ${JSON.stringify(front)}\n`);
    for (const fault of ['dropped', 'delayed', 'forks', 'rolledBack'])
      assert.ok(cluster[fault]! > 0, `the chain misbehaved (${fault}): ${JSON.stringify(cluster)}`);
    for (const fault of ['rateLimited', 'staleAnswers'])
      assert.ok(front[fault]! > 0, `its endpoint misbehaved (${fault}): ${JSON.stringify(front)}`);
  }

  /** A USDC-like mint, set on chain as surfnet_setAccount does it. */
  async function createMint(on: ChainProcess): Promise<Address> {
    const address = (await generateKeyPairSigner()).address;
    const data = getMintEncoder().encode({
      mintAuthority: some((await generateKeyPairSigner()).address),
      supply: 0n,
      decimals: 6,
      isInitialized: true,
      freezeAuthority: none(),
    });
    await on.rpc('surfnet_setAccount', [
      address,
      {
        lamports: Number(await on.chain.getMinimumBalanceForRentExemption(getMintSize())),
        owner: TOKEN_PROGRAM_ADDRESS,
        data: Buffer.from(data).toString('hex'),
      },
    ]);
    return address;
  }

  /** What an owner holds of a mint: tokens in its associated account, or lamports. */
  async function holding(owner: Address, of: Address): Promise<bigint> {
    if (of === SOL_MINT) return BigInt(await chain.chain.getBalance(owner));
    const [account] = await findAssociatedTokenPda({ owner, mint: of, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    return (await chain.chain.getTokenAccount(account))?.amount ?? 0n;
  }

  /**
   * A funded source wallet estimates, creates, signs and broadcasts its transfer with the
   * TypeScript client, straight to the chain, at the shortest arrival its hops allow.
   */
  async function deploy(terms: { hops: number; native: boolean }): Promise<Deployed> {
    const source = await generateKeyPairSigner();
    const recipient = (await generateKeyPairSigner()).address;
    const of = terms.native ? (SOL_MINT as Address) : mint;
    const amountRaw = terms.native ? 2_000_000_000n : 250_000_000n;
    await chain.airdrop(source.address, 20_000_000_000n);
    if (!terms.native)
      await chain.rpc('surfnet_setTokenAccount', [source.address, mint, { amount: Number(amountRaw) }]);
    const request = {
      tokenMint: of,
      amountRaw: String(amountRaw),
      hops: terms.hops,
      ...(terms.native ? {} : { tokenPriceUsd: 1 }),
    };
    const estimate = await client.estimateTransfer(request);
    const created = await client.createTransfer({
      ...request,
      amountTokens: rawToTokens(amountRaw, estimate.tokens.decimals),
      sourceOwner: source.address,
      recipientWallet: recipient,
      arrivalSeconds: minArrivalSeconds(terms.hops),
    });
    await signAndBroadcastBundle(client, {
      transferId: created.id,
      signer: source,
      rpc: createSolanaRpc(chain.rpcUrl),
    });
    return {
      id: created.id,
      hops: terms.hops,
      mint: of,
      recipient,
      netDeliveredRaw: BigInt(estimate.tokens.netDeliveredRaw),
    };
  }

  /**
   * Deploys the transfers as WALLETS users at once do, each deploying its next as soon as its last
   * is broadcast: the API sees a steady crowd rather than one burst of every transfer.
   */
  async function deployAll(terms: typeof TRANSFERS): Promise<Deployed[]> {
    const out: Deployed[] = [];
    let next = 0;
    const wallet = async () => {
      while (next < terms.length) {
        const index = next++;
        out[index] = await deploy(terms[index]!);
      }
    };
    await Promise.all(Array.from({ length: Math.min(WALLETS, terms.length) }, wallet));
    return out;
  }

  /**
   * Moves the chain's clock on to the next hop falling due, every BEAT_MS, and wakes the keepers as a
   * takeover does, until every transfer is completed: routes run in seconds what takes minutes on a
   * cluster. The clock never passes the next hop of a route whose hop is in flight, so each hop
   * falls due only once its route is ready for it, as on a cluster.
   */
  async function carryToCompletion(ids: number[]) {
    const deadline = Date.now() + 120_000 + 2_000 * TRANSFERS.length;
    for (;;) {
      const chainNow = (await chain.chain.getClock()).unixTimestamp;
      const { rows } = await database.db.query<{
        done: number;
        lost: number;
        next: string | null;
        held: string | null;
        ran: number;
      }>(
        `SELECT count(*) FILTER (WHERE status = 'completed')::int AS done,
                sum(hops_completed)::int AS ran,
                count(*) FILTER (WHERE status NOT IN ('processing', 'completed'))::int AS lost,
                min(keeper_due_at) FILTER (WHERE status = 'processing' AND keeper_due_at > $2) AS next,
                min(keeper_due_at + interval_seconds)
                  FILTER (WHERE status = 'processing' AND keeper_due_at <= $2) AS held
           FROM transfers WHERE id = ANY($1)`,
        [ids, chainNow.toString()],
      );
      const { done, lost, next, held, ran } = rows[0]!;
      if (done === ids.length) return;
      if (!inFlightAtKill && ran * 3 >= deployed.reduce((total, transfer) => total + transfer.hops, 0)) {
        await killAWorker();
      }
      if (lost > 0 || Date.now() > deadline) {
        const { rows: states } = await database.db.query(
          'SELECT id, status, phase, hops_completed, hops, last_error FROM transfers WHERE id = ANY($1)',
          [ids],
        );
        throw new Error(
          `transfers not completed: ${JSON.stringify(states)}\n${JSON.stringify(proxy.stats())}`,
        );
      }
      if (next !== null && (held === null || BigInt(next) < BigInt(held))) {
        travels.push({ wallMs: Date.now(), chainMs: Number(next) * 1000 });
        await chain.travelTo(Number(next) * 1000);
      }
      // A keeper that read the clock before it moved would sleep past the hops now due.
      await database.db.query('SELECT pg_notify($1, $2)', [KEEPER_CHANNEL, '']);
      await delay(BEAT_MS);
    }
  }

  /**
   * Kills the first worker process with SIGKILL mid-run, notes the deliveries it held, and starts
   * another in its place.
   */
  async function killAWorker() {
    const doomed = services[1]!;
    killedAt = Date.now();
    await doomed.stop('SIGKILL');
    const { rows } = await database.db.query<{ event_id: string }>(
      `SELECT delivery.event_id FROM webhook_deliveries delivery
         JOIN worker_processes worker ON worker.id = delivery.claimed_by
        WHERE worker.name LIKE '%:' || $1 AND delivery.lease_token IS NOT NULL`,
      [String(doomed.pid)],
    );
    inFlightAtKill = rows.map((row) => row.event_id);
    services.push(await startServiceProcess({ ...shared, METRICS_PORT: '0' }, { workersOnly: true }));
  }

  /**
   * The hops ran once each, on chain: the route settled with every step executed, and the
   * transactions the keeper paid on the route are exactly the signatures recorded, one per hop,
   * none failed.
   */
  async function assertHopsRanOnce(transfer: Deployed) {
    const { rows } = await database.db.query<{
      route_address: Address;
      keeper: Address;
      hop_signatures: string[];
    }>(
      `SELECT route_address, keeper_address AS keeper,
              ARRAY(SELECT jsonb_array_elements_text(signatures -> 'hops')) AS hop_signatures
         FROM transfers WHERE id = $1`,
      [transfer.id],
    );
    const { route_address: routeAddress, keeper, hop_signatures: recorded } = rows[0]!;
    const account = await chain.chain.getAccount(routeAddress);
    if (account) {
      const route = decodeRoute(account.data);
      assert.equal(route.status, 'settled');
      assert.equal(route.nextStep, transfer.hops);
    }
    const history = await chain.rpc<{ signature: string; err: unknown }[]>('getSignaturesForAddress', [
      routeAddress,
      { commitment: 'confirmed' },
    ]);
    const keeperPaid: { signature: string; failed: boolean }[] = [];
    for (const { signature, err } of history) {
      const landed = await chain.chain.getTransaction(signature as Signature);
      if (landed?.accountKeys[0] === keeper) keeperPaid.push({ signature, failed: err !== null });
    }
    assert.deepEqual(
      keeperPaid.filter((tx) => tx.failed),
      [],
      `transfer ${transfer.id}: no hop failed on chain`,
    );
    assert.equal(recorded.length, transfer.hops);
    assert.deepEqual(
      keeperPaid.map((tx) => tx.signature).sort(),
      [...recorded].sort(),
      `transfer ${transfer.id}: the keeper's transactions are exactly the recorded hops, one each`,
    );
  }

  /** Each transfer's events: stored with gapless sequences, each delivered exactly once. */
  async function assertEventsDeliveredOnce() {
    const { rows: stored } = await database.db.query<{
      id: string;
      transfer_id: string;
      sequence: number;
      type: string;
    }>(
      'SELECT id, transfer_id, sequence, type FROM events WHERE transfer_id = ANY($1) ORDER BY transfer_id, sequence',
      [deployed.map((transfer) => transfer.id)],
    );
    for (const transfer of deployed) {
      const own = stored.filter((event) => Number(event.transfer_id) === transfer.id);
      assert.deepEqual(
        own.map((event) => event.sequence),
        own.map((_, i) => i + 1),
        `transfer ${transfer.id}: event sequences without gaps`,
      );
      assert.equal(own.filter((event) => event.type === 'transfer.hop_complete').length, transfer.hops);
      assert.equal(own.at(-1)?.type, 'transfer.phase_changed');
    }
    const deadline = Date.now() + 20_000;
    const delivered = () =>
      receiver.received
        .map((request) => JSON.parse(request.body) as { id: string; type: string })
        .filter((event) => event.type !== 'ping');
    const unique = () => [...new Set(delivered().map((event) => event.id))];
    while (unique().length < stored.length && Date.now() < deadline) await delay(100);
    await delay(500);
    assert.deepEqual(unique().sort(), stored.map((event) => event.id).sort(), 'every event delivered');
    const twice = delivered()
      .map((event) => event.id)
      .filter((id, index, all) => all.indexOf(id) !== index);
    assert.ok(inFlightAtKill, 'a worker was killed mid-run');
    assert.deepEqual(
      twice.filter((id) => !inFlightAtKill!.includes(id)),
      [],
      'no event delivered twice but one the killed worker had in flight',
    );
  }

  /** The worker processes logged each hop landing once, in one of them. */
  async function assertLoggedHopsOnce() {
    const landed = services
      .slice(1)
      .flatMap((service) => service.logs)
      .flatMap((line) => (line.startsWith('{') ? [JSON.parse(line) as Record<string, unknown>] : []))
      .filter((line) => String(line.msg).startsWith('hop landed'))
      .map((line) => `${line.transferId}/${line.step}`)
      .sort();
    const expected = deployed
      .flatMap((transfer) => Array.from({ length: transfer.hops }, (_, step) => `${transfer.id}/${step}`))
      .sort();
    assert.deepEqual(
      landed.filter((hop, i) => hop === landed[i - 1] || !expected.includes(hop)),
      [],
      'no hop logged twice, none unknown',
    );
    // The killed worker's last lines may die with it, unwritten: a hop it recorded right before.
    const { rows } = await database.db.query<{ hop: string; at: Date }>(
      `SELECT e.transfer_id || '/' || ((e.payload -> 'data' -> 'transfer' -> 'progress' ->> 'hopsCompleted')::int - 1) AS hop,
              e.created_at AS at
         FROM events e WHERE e.transfer_id = ANY($1) AND e.type = 'transfer.hop_complete'`,
      [deployed.map((transfer) => transfer.id)],
    );
    const recordedAt = new Map(rows.map((row) => [row.hop, row.at.getTime()]));
    assert.deepEqual(
      expected.filter((hop) => {
        if (landed.includes(hop)) return false;
        const at = recordedAt.get(hop) ?? 0;
        return !(at >= killedAt - 2_000 && at <= killedAt + 1_000);
      }),
      [],
      'one "hop landed" line per hop, but for a hop the killed worker recorded as it died',
    );
  }

  /** The wall time at which the chain's clock reached `chainMs`, from the moves made and the time between. */
  function wallTimeAt(chainMs: number): number {
    // Before the first move the chain's clock is the system clock; between moves it runs with it.
    let offset = 0;
    for (const travel of travels) {
      if (chainMs - offset < travel.wallMs) return chainMs - offset;
      if (travel.chainMs >= chainMs) return travel.wallMs;
      offset = travel.chainMs - travel.wallMs;
    }
    return chainMs - offset;
  }

  /**
   * Every transfer arrived on time: its last hop recorded (once `confirmed`) within ON_TIME_MS of the
   * moment the chain's clock reached its due time. Reports the lateness of every hop.
   */
  async function assertOnTime() {
    const { rows } = await database.db.query<{
      transfer_id: string;
      step: number;
      last: boolean;
      due: string;
      at: Date;
    }>(
      `SELECT e.transfer_id, h.step, h.step = t.hops - 1 AS last,
              t.first_release_at + h.step * t.interval_seconds AS due, e.created_at AS at
         FROM events e JOIN transfers t ON t.id = e.transfer_id,
              LATERAL (SELECT (e.payload -> 'data' -> 'transfer' -> 'progress' ->> 'hopsCompleted')::int - 1 AS step) h
        WHERE e.transfer_id = ANY($1) AND e.type = 'transfer.hop_complete'`,
      [deployed.map((transfer) => transfer.id)],
    );
    const lateness = rows
      .map((row) => ({
        hop: `${row.transfer_id}/${row.step}`,
        last: row.last,
        ms: row.at.getTime() - wallTimeAt(Number(row.due) * 1000),
      }))
      .sort((a, b) => a.ms - b.ms);
    const at = (share: number) =>
      lateness[Math.min(lateness.length - 1, Math.floor(share * lateness.length))]!.ms;
    process.stderr.write(
      `hop lateness over ${lateness.length} hops: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${lateness.at(-1)!.ms} ms; arrivals at most ${Math.max(...lateness.filter((hop) => hop.last).map((hop) => hop.ms))} ms late; ${JSON.stringify(proxy.stats())}\n`,
    );
    assert.equal(lateness.filter((hop) => hop.last).length, deployed.length);
    assert.deepEqual(
      lateness.filter((hop) => hop.last && hop.ms > ON_TIME_MS),
      [],
      `every transfer arrived within ${ON_TIME_MS / 1000} s of its due time`,
    );
  }
});
