import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { generateKeyPairSigner } from '@solana/kit';
import { createTestDatabase } from '../test/helpers/database.ts';
import { type ServiceProcess, startServiceProcess } from '../test/helpers/process.ts';
import { type LoadResult, markdownTable, runLoad } from './lib/load.ts';
import { pgbench } from './lib/pgbench.ts';

/**
 * HTTP API throughput and latency on PostgreSQL, beside its baselines: the same Fastify with no
 * middleware (a trivial route, and the transfer read with identical handler logic), and pgbench
 * running a comparable single-row insert and primary-key select on the same server.
 *
 *   npm run bench -- api        (BENCH_SECONDS per run, default 8)
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ADMIN_TOKEN = `bench-admin-${randomBytes(12).toString('hex')}`;
const SOL_MINT = 'So11111111111111111111111111111111111111112';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

const database = await createTestDatabase({ poolSize: 2 });
const results: LoadResult[] = [];
const services: ServiceProcess[] = [];

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

try {
  const service = await startServiceProcess({ DATABASE_URL: database.url, ADMIN_TOKEN, LOG_LEVEL: 'warn' });
  services.push(service);
  const integration = await admin(service, '/admin/v1/integrations', {
    name: 'bench',
    settings: { rateLimitMultiplier: 100_000 },
  });
  const { key } = await admin(service, `/admin/v1/integrations/${integration.id}/keys`, { mode: 'test' });
  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  const source = (await generateKeyPairSigner()).address;
  const recipient = (await generateKeyPairSigner()).address;
  const createBody = JSON.stringify({
    tokenMint: SOL_MINT,
    amountRaw: '1000000000',
    amountTokens: '1',
    sourceOwner: source,
    recipientWallet: recipient,
  });
  let transferId = 0;
  for (let index = 0; index < 60; index++) {
    const response = await fetch(`${service.url}/api/v1/transfers`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': `seed-${index}-${randomBytes(4).toString('hex')}` },
      body: createBody,
    });
    if (!response.ok) throw new Error(`seeding failed: ${await response.text()}`);
    transferId = ((await response.json()) as { id: number }).id;
  }
  const bare = await startBareServer(integration.id);
  const estimateBody = JSON.stringify({ tokenMint: SOL_MINT, amountRaw: '1000000000' });
  const freshKey = () => ({
    headers: { 'idempotency-key': `bench-${randomBytes(9).toString('base64url')}` },
  });

  results.push(
    await runLoad({
      name: 'bare route (no middleware)',
      url: `${bare.url}/bare/hello`,
      durationSeconds: SECONDS,
    }),
  );
  results.push(
    await runLoad({
      name: 'bare GET transfer (same handler, no middleware)',
      url: `${bare.url}/bare/transfers/${transferId}`,
      durationSeconds: SECONDS,
    }),
  );
  results.push(
    await runLoad({
      name: 'GET /transfers/{id} (auth, rate limit in process)',
      url: `${service.url}/api/v1/transfers/${transferId}`,
      headers,
      durationSeconds: SECONDS,
    }),
  );
  results.push(
    await runLoad({
      name: 'GET /transfers?limit=50',
      url: `${service.url}/api/v1/transfers?limit=50`,
      headers,
      durationSeconds: SECONDS,
    }),
  );
  results.push(
    await runLoad({
      name: 'POST /transfers/estimate',
      url: `${service.url}/api/v1/transfers/estimate`,
      method: 'POST',
      headers,
      body: estimateBody,
      durationSeconds: SECONDS,
    }),
  );
  results.push(
    await runLoad({
      name: 'POST /transfers/estimate + Idempotency-Key',
      url: `${service.url}/api/v1/transfers/estimate`,
      method: 'POST',
      headers,
      body: estimateBody,
      perRequest: freshKey,
      durationSeconds: SECONDS,
    }),
  );
  results.push(
    await runLoad({
      name: 'POST /transfers (idempotent create)',
      url: `${service.url}/api/v1/transfers`,
      method: 'POST',
      headers,
      body: createBody,
      perRequest: freshKey,
      durationSeconds: SECONDS,
    }),
  );
  await service.stop();
  services.pop();

  const withRedis = await startServiceProcess({
    DATABASE_URL: database.url,
    ADMIN_TOKEN,
    LOG_LEVEL: 'warn',
    REDIS_URL,
  });
  services.push(withRedis);
  results.push(
    await runLoad({
      name: 'GET /transfers/{id} (auth, rate limit in Redis)',
      url: `${withRedis.url}/api/v1/transfers/${transferId}`,
      headers,
      durationSeconds: SECONDS,
    }),
  );
  results.push(
    await runLoad({
      name: 'POST /transfers/estimate (rate limit in Redis)',
      url: `${withRedis.url}/api/v1/transfers/estimate`,
      method: 'POST',
      headers,
      body: estimateBody,
      durationSeconds: SECONDS,
    }),
  );
  await withRedis.stop();
  services.pop();
  bare.stop();

  await database.db.exec('CREATE TABLE bench_transfers (LIKE transfers INCLUDING ALL)');
  const insertTps = pgbench({
    url: database.url,
    clients: 8,
    seconds: SECONDS,
    script: `\\set n random(1, 1000000000)
INSERT INTO bench_transfers (integration_id, mode, support_bundle_id, create_fingerprint, token_mint, token_decimals,
  amount_raw, amount_tokens, source_owner, recipient_wallet, funding_strategy, hops, arrival_seconds, token_price_usd,
  price_source, usd_equivalent, pricing_tier, percent_fee_bps, percent_fee_raw, integrator_percent_share_raw,
  net_delivered_raw, flat_fee_lamports_per_hop, total_flat_fee_lamports, integrator_flat_share_lamports, status, phase,
  quoted_at, expires_at, created_at, updated_at)
VALUES (${integration.id}, 'test', 'TR-' || :n || '-' || random(), '\\x00', '${SOL_MINT}', 9, 1000000000, '1', '${source}',
  '${recipient}', 'signed_bundle', 7, 600, '150', 'fixed', 150, 'standard', 100, 10000000, 3000000, 990000000, 10000,
  70000, 21000, 'quote', 'quoted', now(), now() + interval '15 minutes', now(), now());
`,
  });
  const selectTps = pgbench({
    url: database.url,
    clients: 8,
    seconds: SECONDS,
    script: `\\set id random(1, ${transferId})\nSELECT * FROM transfers WHERE id = :id;\n`,
  });

  const rps = (name: string) => results.find((result) => result.name.startsWith(name))!.requestsPerSecond;
  const percent = (part: number, whole: number) => `${Math.round((100 * part) / whole)}%`;
  process.stdout.write(
    `${markdownTable(
      ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'errors / non-2xx'],
      [
        ...results.map((r) => [r.name, r.requestsPerSecond, r.p50Ms, r.p99Ms, `${r.errors} / ${r.non2xx}`]),
        ['pgbench single-row insert (8 clients)', insertTps, '', '', ''],
        ['pgbench primary-key select (8 clients)', selectTps, '', '', ''],
      ],
    )}\n\n${markdownTable(
      ['ratio', 'measured', 'target'],
      [
        [
          'GET /transfers/{id}, in-process limits / bare same route',
          percent(rps('GET /transfers/{id} (auth, rate limit in process'), rps('bare GET transfer')),
          '≥ 60%',
        ],
        [
          'GET /transfers/{id}, Redis limits / bare same route',
          percent(rps('GET /transfers/{id} (auth, rate limit in Redis'), rps('bare GET transfer')),
          '≥ 60%',
        ],
        ['estimate / bare route', percent(rps('POST /transfers/estimate'), rps('bare route')), '≥ 50%'],
        ['create / pgbench insert', percent(rps('POST /transfers (idempotent'), insertTps), '≥ 40%'],
        [
          'get-by-id / pgbench select',
          percent(rps('GET /transfers/{id} (auth, rate limit in process'), selectTps),
          '≥ 50%',
        ],
      ],
    )}\n`,
  );
} finally {
  for (const service of services) await service.stop();
  await database.drop();
}
