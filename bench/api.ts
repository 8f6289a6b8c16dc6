import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { generateKeyPairSigner } from '@solana/kit';
import { createTestDatabase } from '../test/helpers/database.ts';
import { type ServiceProcess, startServiceProcess } from '../test/helpers/process.ts';
import { type LoadOptions, type LoadResult, markdownTable, requireTool, runLoad } from './lib/load.ts';
import { pgbench } from './lib/pgbench.ts';

/**
 * HTTP API throughput and latency on PostgreSQL, beside its baselines: the same Fastify with no
 * middleware (a trivial route, and the estimate and transfer-read handlers themselves), and
 * pgbench running a comparable single-row insert and primary-key select on the same server.
 * Compared scenarios and baselines run in interleaved rounds, and each ratio is the median of its
 * per-round ratios, so that a noisy machine skews both sides of a ratio alike.
 *
 *   npm run bench -- api    (BENCH_SECONDS per run, default 6; BENCH_ROUNDS, default 3; BENCH_CONNECTIONS
 *                            per HTTP load, default 16; needs wrk and pgbench)
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const ADMIN_TOKEN = `bench-admin-${randomBytes(12).toString('hex')}`;
const ENCRYPTION_KEY = randomBytes(32).toString('hex');
const SOL_MINT = 'So11111111111111111111111111111111111111112';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

requireTool('wrk', 'sudo apt-get install -y wrk');
requireTool('pgbench', 'it ships with the PostgreSQL client (sudo apt-get install -y postgresql-client)');
const database = await createTestDatabase({ poolSize: 2 });
const stops: (() => unknown)[] = [];

async function admin(service: ServiceProcess, path: string, body: unknown) {
  const response = await fetch(`${service.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as { id: number; key: string };
}

function startBareServer(integrationId: number): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, [join(import.meta.dirname, 'lib', 'bare-server.ts')], {
    env: { ...process.env, DATABASE_URL: database.url, BENCH_INTEGRATION_ID: String(integrationId) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve) => {
    createInterface({ input: child.stdout! }).once('line', (line) => {
      resolve({ url: JSON.parse(line).url, stop: () => child.kill('SIGTERM') });
    });
  });
}

async function service(env: Record<string, string>) {
  const started = await startServiceProcess({
    DATABASE_URL: database.url,
    ADMIN_TOKEN,
    ENCRYPTION_KEY,
    LOG_LEVEL: 'warn',
    ...env,
  });
  stops.push(() => started.stop());
  return started;
}

/** One measured run: an HTTP load, or a pgbench baseline reported in the same shape. */
interface Measure {
  name: string;
  run(): LoadResult;
}

const http = (scenario: LoadOptions): Measure => ({
  name: scenario.name,
  run: () => runLoad({ durationSeconds: SECONDS, connections: CONNECTIONS, ...scenario }),
});

const baseline = (name: string, tps: () => number): Measure => ({
  name,
  run: () => ({ name, requestsPerSecond: tps(), p50Ms: Number.NaN, p99Ms: Number.NaN, errors: 0, non2xx: 0 }),
});

/**
 * Runs every measure once per round, interleaved, and keeps every round. The machine's load comes
 * and goes (other tenants), so figures are compared within a round: a ratio is the median of its
 * per-round ratios, and the table shows each measure's median round.
 */
function rounds(measures: Measure[]): Map<string, LoadResult[]> {
  const runs = new Map(measures.map((measure) => [measure.name, [] as LoadResult[]]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const measure of measures) runs.get(measure.name)!.push(measure.run());
  }
  return runs;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

try {
  const [inProcess, withRedis] = await Promise.all([service({}), service({ REDIS_URL })]);
  // Limits are enforced as usual but raised so that the load itself is never refused.
  const integration = await admin(inProcess, '/admin/v1/integrations', {
    name: 'bench',
    settings: { rateLimitMultiplier: 100_000 },
  });
  const { key } = await admin(inProcess, `/admin/v1/integrations/${integration.id}/keys`, { mode: 'test' });
  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  const createBody = JSON.stringify({
    tokenMint: SOL_MINT,
    amountRaw: '1000000000',
    amountTokens: '1',
    sourceOwner: (await generateKeyPairSigner()).address,
    recipientWallet: (await generateKeyPairSigner()).address,
  });
  let transferId = 0;
  for (let index = 0; index < 60; index++) {
    const response = await fetch(`${inProcess.url}/api/v1/transfers`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': `seed-${index}-${randomBytes(4).toString('hex')}` },
      body: createBody,
    });
    if (!response.ok) throw new Error(`seeding failed: ${await response.text()}`);
    transferId = ((await response.json()) as { id: number }).id;
  }
  const bare = await startBareServer(integration.id);
  stops.push(() => bare.stop());
  const estimate = {
    method: 'POST' as const,
    headers,
    body: JSON.stringify({ tokenMint: SOL_MINT, amountRaw: '1000000000' }),
  };
  const transfer = `/api/v1/transfers/${transferId}`;

  await database.db.exec('CREATE TABLE bench_transfers (LIKE transfers INCLUDING ALL)');
  // pgbench's default protocol is the baseline; prepared statements (what the service's queries
  // use) are shown beside it as the database's ceiling.
  const pgbenchName = (what: string, mode: string) =>
    `pgbench ${what} (8 clients${mode === 'simple' ? '' : `, ${mode} statements`})`;
  const PGBENCH_INSERT = pgbenchName('single-row insert', 'simple');
  const PGBENCH_SELECT = pgbenchName('primary-key select', 'simple');
  const insertScript = `\\set n random(1, 1000000000)
INSERT INTO bench_transfers (integration_id, mode, support_bundle_id, create_fingerprint, token_mint, token_decimals,
  amount_raw, amount_tokens, source_owner, recipient_wallet, funding_strategy, hops, arrival_seconds, token_price_usd,
  price_source, usd_equivalent, pricing_tier, percent_fee_bps, percent_fee_raw, integrator_percent_share_raw,
  net_delivered_raw, flat_fee_lamports_per_hop, total_flat_fee_lamports, integrator_flat_share_lamports, status, phase,
  quoted_at, expires_at, created_at, updated_at)
VALUES (${integration.id}, 'test', 'TR-' || :n || '-' || random(), '\\x00', '${SOL_MINT}', 9, 1000000000, '1',
  'source', 'recipient', 'signed_bundle', 7, 600, '150', 'fixed', 150, 'standard', 100, 10000000, 3000000, 990000000,
  10000, 70000, 21000, 'quote', 'quoted', now(), now() + interval '15 minutes', now(), now());
`;
  const selectScript = `\\set id random(1, ${transferId})\nSELECT * FROM transfers WHERE id = :id;\n`;
  const measured = rounds([
    http({ name: 'bare route (no middleware)', url: `${bare.url}/bare/hello` }),
    http({
      name: 'bare GET transfer (same handler, no middleware)',
      url: `${bare.url}/bare/transfers/${transferId}`,
    }),
    http({
      name: 'GET /transfers/{id} (auth, rate limit in process)',
      url: `${inProcess.url}${transfer}`,
      headers,
    }),
    http({
      name: 'GET /transfers/{id} (auth, rate limit in Redis)',
      url: `${withRedis.url}${transfer}`,
      headers,
    }),
    http({
      name: 'bare estimate (same handler, no middleware)',
      url: `${bare.url}/bare/transfers/estimate`,
      ...estimate,
    }),
    http({
      name: 'POST /transfers/estimate',
      url: `${inProcess.url}/api/v1/transfers/estimate`,
      ...estimate,
    }),
    http({
      name: 'POST /transfers/estimate (rate limit in Redis)',
      url: `${withRedis.url}/api/v1/transfers/estimate`,
      ...estimate,
    }),
    http({
      name: 'POST /transfers (idempotent create)',
      url: `${inProcess.url}/api/v1/transfers`,
      method: 'POST',
      headers,
      body: createBody,
      freshIdempotencyKey: true,
    }),
    ...(['simple', 'prepared'] as const).flatMap((mode) => [
      baseline(pgbenchName('single-row insert', mode), () =>
        pgbench({ url: database.url, clients: 8, seconds: SECONDS, mode, script: insertScript }),
      ),
      baseline(pgbenchName('primary-key select', mode), () =>
        pgbench({ url: database.url, clients: 8, seconds: SECONDS, mode, script: selectScript }),
      ),
    ]),
  ]);
  const once = [
    {
      name: 'POST /transfers/estimate + Idempotency-Key',
      url: `${inProcess.url}/api/v1/transfers/estimate`,
      ...estimate,
      freshIdempotencyKey: true,
    },
    { name: 'GET /transfers?limit=50', url: `${inProcess.url}/api/v1/transfers?limit=50`, headers },
  ].map((scenario) => runLoad({ durationSeconds: SECONDS, connections: CONNECTIONS, ...scenario }));
  for (const stop of stops.splice(0)) await stop();

  const medianRound = (results: LoadResult[]) =>
    [...results].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)[Math.floor(results.length / 2)]!;
  const table = [...[...measured.values()].map(medianRound), ...once];
  const perRound = (name: string) => measured.get(name)!.map((result) => result.requestsPerSecond);
  const ratio = (label: string, part: string, whole: string, target: string) => {
    const wholes = perRound(whole);
    const ratios = perRound(part).map((value, round) => value / wholes[round]!);
    return [label, `${Math.round(100 * median(ratios))}%`, target];
  };
  const latency = (ms: number) => (Number.isNaN(ms) ? '' : ms);
  process.stdout.write(
    `${markdownTable(
      ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'socket errors / non-2xx'],
      table.map((r) => [
        r.name,
        r.requestsPerSecond,
        latency(r.p50Ms),
        latency(r.p99Ms),
        r.name.startsWith('pgbench') ? '' : `${r.errors} / ${r.non2xx}`,
      ]),
    )}\n\n${markdownTable(
      ['ratio (median of per-round ratios)', 'measured', 'target'],
      [
        ratio(
          'GET /transfers/{id}, in-process limits / bare same route',
          'GET /transfers/{id} (auth, rate limit in process)',
          'bare GET transfer (same handler, no middleware)',
          '≥ 50%',
        ),
        ratio(
          'GET /transfers/{id}, Redis limits / bare same route',
          'GET /transfers/{id} (auth, rate limit in Redis)',
          'bare GET transfer (same handler, no middleware)',
          '≥ 50%',
        ),
        ratio(
          'estimate / bare same route',
          'POST /transfers/estimate',
          'bare estimate (same handler, no middleware)',
          '≥ 50%',
        ),
        ratio(
          'estimate / trivial bare route',
          'POST /transfers/estimate',
          'bare route (no middleware)',
          '(reference)',
        ),
        ratio('create / pgbench insert', 'POST /transfers (idempotent create)', PGBENCH_INSERT, '≥ 25%'),
        ratio(
          'get-by-id / pgbench select',
          'GET /transfers/{id} (auth, rate limit in process)',
          PGBENCH_SELECT,
          '≥ 50%',
        ),
        ratio(
          'create / pgbench insert with prepared statements',
          'POST /transfers (idempotent create)',
          pgbenchName('single-row insert', 'prepared'),
          '(reference)',
        ),
        ratio(
          'get-by-id / pgbench select with prepared statements',
          'GET /transfers/{id} (auth, rate limit in process)',
          pgbenchName('primary-key select', 'prepared'),
          '(reference)',
        ),
      ],
    )}\n`,
  );
} finally {
  for (const stop of stops) await stop();
  await database.drop();
}
