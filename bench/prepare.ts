import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout } from 'node:timers/promises';
import {
  type Address,
  generateKeyPairSigner,
  getBase64Encoder,
  getTransactionDecoder,
  none,
  some,
} from '@solana/kit';
import { getMintEncoder, getMintSize, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { findConfigPda } from '../src/chain/router/pda.ts';
import { ROUTER_PROGRAM_ADDRESS } from '../src/chain/router/program.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { startServiceProcess } from '../test/helpers/process.ts';
import { markdownTable } from './lib/load.ts';
import { type BaselineBundle, createPrepareBaseline } from './lib/prepare-baseline.ts';

/**
 * `POST /transfers/{id}/prepare` for 3-hop and 10-hop SPL-token transfers, each the first prepare
 * of a freshly created transfer (so every one does the whole work: keeper, reads, simulations,
 * signatures), against the service on PostgreSQL with its embedded chain, beside a baseline in
 * the same run: the same JSON-RPC calls against the same endpoint and the same transactions built
 * and partially signed directly with `@solana/kit` (bench/lib/prepare-baseline.ts). Prepare's
 * figure is the server's own time for the request (the `ms` of its request log line); the
 * baseline's is its wall time. Requests go one at a time, prepare and baseline interleaved within
 * a round; each ratio is the median of its per-round ratios of medians. Beside the times, the mean
 * CPU each side costs the machine (Linux's accounting in /proc): prepare's is the service
 * process's; the baseline's is its own plus the service process's (the chain answering it). The
 * CPU ratio shows what the time ratio cannot: in the service the embedded chain, the RPC client
 * and the signing share one thread, while the baseline's client runs in this process, beside it.
 *
 *   npm run bench -- prepare    (BENCH_ROUNDS, default 5; BENCH_SAMPLES per scenario and round,
 *                                default 10; BENCH_WARMUP untimed ones first, default 10;
 *                                BENCH_CPU_PROF_DIR: write the service's CPU profile there)
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 10);
const HOPS = [3, 10] as const;
const TARGET = 1.5;
const ADMIN_TOKEN = `bench-admin-${randomBytes(12).toString('hex')}`;
/** The floor and hop budget the service is started with, so that the baseline prices its transactions alike. */
const PRIORITY_FEE_FLOOR = 1_000n;
const HOP_PRIORITY_BUDGET_MULTIPLIER = 8;

const database = await createTestDatabase({ poolSize: 2 });
// Workers stopped: the deployment reconciler would otherwise read the chain for every prepared
// transfer in the background, in the same process as the chain both sides use.
const service = await startServiceProcess({
  DATABASE_URL: database.url,
  ADMIN_TOKEN,
  ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  LOG_LEVEL: 'info',
  WORKERS_ENABLED: 'false',
  PRIORITY_FEE_MICROLAMPORTS_PER_CU: String(PRIORITY_FEE_FLOOR),
  HOP_PRIORITY_BUDGET_MULTIPLIER: String(HOP_PRIORITY_BUDGET_MULTIPLIER),
  // Where the service's time goes: a CPU profile of the whole run, written when it stops.
  ...(process.env.BENCH_CPU_PROF_DIR
    ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}` }
    : {}),
});

/** The server's time for a request, from its request log line (written once the answer is sent). */
async function serverMs(requestId: string): Promise<number> {
  for (let waited = 0; waited < 5_000; waited++) {
    for (let index = service.logs.length - 1; index >= 0; index--) {
      const line = service.logs[index]!;
      if (!line.includes(requestId)) continue;
      const entry = JSON.parse(line) as { reqId?: string; msg?: string; ms?: number };
      if (entry.reqId === requestId && entry.msg === 'request') return entry.ms!;
    }
    await setTimeout(1);
  }
  throw new Error(`no request log line for ${requestId}`);
}

const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
/** CPU time a process has used so far, in ms, as Linux accounts it (in clock ticks). */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
}

/** A call to the service's API, JSON both ways; anything but a 2xx throws. */
async function call<T>(
  path: string,
  options: { method?: 'GET' | 'POST'; body?: unknown; headers: Record<string, string> },
) {
  const response = await fetch(`${service.url}${path}`, {
    method: options.method ?? 'POST',
    headers: {
      ...options.headers,
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

try {
  const rpcUrl = /"chain":"(http:\/\/[^"]+)"/.exec(
    service.logs.find((line) => line.includes('Transfer Router listening'))!,
  )![1]!;
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
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const integration = await call<{ id: number }>('/admin/v1/integrations', {
    headers: admin,
    body: { name: 'bench', settings: { rateLimitMultiplier: 100_000 } },
  });
  const { key } = await call<{ key: string }>(`/admin/v1/integrations/${integration.id}/keys`, {
    headers: admin,
    body: { mode: 'test' },
  });
  const status = await call<{
    settings: {
      screeningRequired: boolean;
      routeGraceSeconds: number;
      priorityFeeCapMicroLamportsPerCu: string;
    };
  }>('/admin/v1/platform', { method: 'GET', headers: admin });
  const [configAddress] = await findConfigPda(ROUTER_PROGRAM_ADDRESS);
  const baseline = createPrepareBaseline(rpcUrl, {
    programAddress: ROUTER_PROGRAM_ADDRESS,
    configAddress,
    screeningRequired: status.settings.screeningRequired,
    routeGraceSeconds: status.settings.routeGraceSeconds,
    priorityFeeFloor: PRIORITY_FEE_FLOOR,
    priorityFeeCap: BigInt(status.settings.priorityFeeCapMicroLamportsPerCu),
    hopPriorityBudgetMultiplier: HOP_PRIORITY_BUDGET_MULTIPLIER,
  });

  // A USDC-like mint, set on chain as surfnet_setAccount does it.
  const mint = (await generateKeyPairSigner()).address;
  const mintData = getMintEncoder().encode({
    mintAuthority: some((await generateKeyPairSigner()).address),
    supply: 0n,
    decimals: 6,
    isInitialized: true,
    freezeAuthority: none(),
  });
  await rpc('surfnet_setAccount', [
    mint,
    {
      lamports: Number(await rpc('getMinimumBalanceForRentExemption', [getMintSize()])),
      owner: TOKEN_PROGRAM_ADDRESS,
      data: Buffer.from(mintData).toString('hex'),
    },
  ]);

  const api = { 'x-api-key': key };
  /** A fresh quote for a fresh, funded source wallet: nothing of its route exists yet. */
  async function freshTransfer(hops: number) {
    const source = (await generateKeyPairSigner()).address;
    await rpc('requestAirdrop', [source, 20_000_000_000]);
    await rpc('surfnet_setTokenAccount', [source, mint, { amount: 1_000_000_000 }]);
    const transfer = await call<{
      id: number;
      hops: number;
      amountRaw: string;
      percentFeeBps: number;
      totalFlatFeeLamports: number;
      arrivalSeconds: number;
      recipientWallet: Address;
    }>('/api/v1/transfers', {
      headers: { ...api, 'idempotency-key': `bench-${randomBytes(8).toString('hex')}` },
      body: {
        tokenMint: mint,
        amountRaw: '250000000',
        amountTokens: '250',
        hops,
        tokenPriceUsd: 1,
        sourceOwner: source,
        recipientWallet: (await generateKeyPairSigner()).address,
      },
    });
    return {
      ...transfer,
      amountRaw: BigInt(transfer.amountRaw),
      flatFeeLamportsPerHop: BigInt(transfer.totalFlatFeeLamports / transfer.hops),
      sourceOwner: source,
      tokenMint: mint,
    };
  }

  /** One measured call: its time, the CPU every process but the client's spent on it, and its bundle. */
  interface Sample {
    ms: number;
    cpuMs: number;
    bundle: BaselineBundle;
  }

  /** Prepare through the API: the server's time for it, and the service process's CPU. */
  async function viaApi(hops: number): Promise<Sample> {
    const transfer = await freshTransfer(hops);
    const cpuBefore = processCpuMs(service.pid);
    const requestId = `bench-${randomBytes(8).toString('hex')}`;
    const { preparedTxs } = await call<{
      preparedTxs: {
        keeperFundingTx: string;
        routeInitTxs: { base64: string }[];
        orchestratorInitTx: string;
        sessionInitTxs: string[];
      };
    }>(`/api/v1/transfers/${transfer.id}/prepare`, {
      headers: { ...api, 'idempotency-key': requestId, 'x-request-id': requestId },
    });
    const bundle = {
      ...preparedTxs,
      routeInitTxs: preparedTxs.routeInitTxs.map(({ base64 }) => base64),
    } as BaselineBundle;
    const ms = await serverMs(requestId);
    return { ms, cpuMs: processCpuMs(service.pid) - cpuBefore, bundle };
  }

  /**
   * The baseline on a transfer of its own (a fresh quote too, so its route is as fresh): its wall
   * time, and the CPU of this process and of the service's (the chain answering it).
   */
  async function direct(hops: number): Promise<Sample> {
    const transfer = await freshTransfer(hops);
    const serviceBefore = processCpuMs(service.pid);
    const ownBefore = process.cpuUsage();
    const started = performance.now();
    const bundle = await baseline(transfer);
    const ms = performance.now() - started;
    const own = process.cpuUsage(ownBefore);
    return { ms, cpuMs: processCpuMs(service.pid) - serviceBefore + (own.user + own.system) / 1000, bundle };
  }

  // Both sides must build the same transactions: the same groups, of the same sizes.
  const transactionDecoder = getTransactionDecoder();
  const bytes = getBase64Encoder();
  const shape = (bundle: BaselineBundle) =>
    [[bundle.keeperFundingTx], bundle.routeInitTxs, [bundle.orchestratorInitTx], bundle.sessionInitTxs].map(
      (group) =>
        group.map((base64) => {
          const transaction = transactionDecoder.decode(bytes.encode(base64));
          return `${transaction.messageBytes.length} bytes, ${Object.keys(transaction.signatures).length} signatures`;
        }),
    );
  for (const hops of HOPS) {
    const [api, kit] = [await viaApi(hops), await direct(hops)];
    const [apiShape, kitShape] = [shape(api.bundle), shape(kit.bundle)];
    if (JSON.stringify(apiShape) !== JSON.stringify(kitShape)) {
      throw new Error(
        `the baseline does not build prepare's transactions (${hops} hops):\n${JSON.stringify(apiShape)}\n${JSON.stringify(kitShape)}`,
      );
    }
  }

  const scenarios = HOPS.flatMap((hops) => [
    { name: `POST /transfers/{id}/prepare, ${hops} hops`, hops, run: viaApi },
    { name: `baseline (same RPC calls, kit builds and signs), ${hops} hops`, hops, run: direct },
  ]);
  for (let index = 0; index < WARMUP; index++) {
    for (const scenario of scenarios) await scenario.run(scenario.hops);
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const perRound = new Map(scenarios.map((scenario) => [scenario.name, [] as number[][]]));
  const cpu = new Map(scenarios.map((scenario) => [scenario.name, [] as number[]]));
  for (let round = 0; round < ROUNDS; round++) {
    const samples = new Map(scenarios.map((scenario) => [scenario.name, [] as number[]]));
    for (let index = 0; index < SAMPLES; index++) {
      for (const scenario of scenarios) {
        const sample = await scenario.run(scenario.hops);
        samples.get(scenario.name)!.push(sample.ms);
        cpu.get(scenario.name)!.push(sample.cpuMs);
      }
    }
    for (const [name, values] of samples) perRound.get(name)!.push(values);
  }
  // CPU is accounted in clock ticks (10 ms): only a mean over many samples means anything.
  const meanCpu = (name: string) =>
    cpu.get(name)!.reduce((sum, value) => sum + value, 0) / cpu.get(name)!.length;

  const ms = (value: number) => Math.round(value * 10) / 10;
  const roundMedians = (name: string) => perRound.get(name)!.map(median);
  const rows = scenarios.map((scenario) => {
    const all = perRound.get(scenario.name)!.flat();
    const sorted = [...all].sort((a, b) => a - b);
    return [
      scenario.name,
      ms(median(roundMedians(scenario.name))),
      ms(sorted[Math.floor(sorted.length * 0.9)]!),
      ms(meanCpu(scenario.name)),
      all.length,
    ];
  });
  const ratios = HOPS.flatMap((hops) => {
    const [prepare, base] = scenarios.filter((scenario) => scenario.hops === hops).map((s) => s.name);
    const bases = roundMedians(base!);
    const ratio = median(roundMedians(prepare!).map((value, round) => value / bases[round]!));
    return [
      [`prepare / baseline, ${hops} hops`, `${ratio.toFixed(2)}x`, `≤ ${TARGET}x`],
      [
        `CPU: prepare / baseline, ${hops} hops`,
        `${(meanCpu(prepare!) / meanCpu(base!)).toFixed(2)}x`,
        '(reference)',
      ],
    ];
  });
  process.stdout.write(
    `${markdownTable(
      [
        'scenario',
        'median ms (median round)',
        'p90 ms (all rounds)',
        'mean CPU ms (service + baseline processes)',
        'samples',
      ],
      rows,
    )}\n\n${markdownTable(['ratio (time: median of per-round ratios of medians)', 'measured', 'target'], ratios)}\n`,
  );
} finally {
  await service.stop();
  await database.drop();
}
