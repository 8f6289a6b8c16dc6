import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { address } from '@solana/kit';
import { pino } from 'pino';
import { systemClock } from '../src/domain/clock.ts';
import type { Owner } from '../src/domain/integration.ts';
import type { EventType, Transfer } from '../src/domain/transfer.ts';
import { newWebhookSecret } from '../src/domain/webhook-signature.ts';
import { createPostgresDb, type Db } from '../src/store/db.ts';
import { appendTransferEvents } from '../src/store/events.ts';
import { createStore, type Store } from '../src/store/index.ts';
import { createSecretBox } from '../src/store/secret-box.ts';
import { startWorkerPresence } from '../src/store/worker-processes.ts';
import { createWebhookSender } from '../src/webhooks/sender.ts';
import { createWebhookDeliveryWorker } from '../src/workers/webhook-delivery.ts';
import { createTestDatabase } from '../test/helpers/database.ts';

/**
 * Webhook delivery: throughput to a healthy local receiver (a backlog drained by 1 and 2 worker
 * processes) and the lag from an event's creation to its arrival at the receiver (p50, p99) while
 * events are produced at a steady rate. Uses a scratch PostgreSQL database, dropped at the end.
 */

const LIFECYCLE: EventType[] = [
  'transfer.phase_changed',
  'transfer.deposit_confirmed',
  'transfer.processing',
  'transfer.hop_complete',
];

if (process.argv[2] === '--worker') {
  await runWorkerProcess(process.argv[3]!, process.argv[4]!);
} else {
  await main();
}

/** A worker process, as `npm run worker` would run one: its own pool, sender and worker. */
async function runWorkerProcess(url: string, keyHex: string) {
  const db = createPostgresDb({ url, poolSize: 4, applicationName: 'bench-webhook-worker' });
  const store = createStore(db, {
    idempotencyTtlMs: 60_000,
    secrets: createSecretBox(Buffer.from(keyHex, 'hex')),
  });
  const sender = createWebhookSender({ requireHttps: false, allowPrivateNetworks: true });
  const presence = await startWorkerPresence(db, pino({ level: 'warn' }));
  const worker = createWebhookDeliveryWorker({
    worker: presence.id,
    db,
    deliveries: store.deliveries,
    sender,
    clock: systemClock,
    log: pino({ level: 'warn' }),
  });
  process.on('message', async (message) => {
    if (message === 'go') worker.start();
    if (message === 'stop') {
      await worker.stop();
      await sender.close();
      await presence.stop();
      await db.close();
      process.exit(0);
    }
  });
  process.send!('ready');
}

async function main() {
  const database = await createTestDatabase({ poolSize: 12 });
  const key = randomBytes(32);
  const store = createStore(database.db, { idempotencyTtlMs: 60_000, secrets: createSecretBox(key) });
  const receiver = await startReceiver();
  const rows: string[][] = [];
  try {
    for (const workers of [1, 2]) {
      const result = await backlog(database.db, store, receiver, {
        url: database.url,
        key,
        workers,
        endpoints: 1,
        transfers: 2_000,
      });
      rows.push([
        `backlog, 1 endpoint, ${workers} worker${workers > 1 ? 's' : ''}`,
        String(result.deliveries),
        `${Math.round(result.deliveries / result.seconds)}`,
        '',
        '',
      ]);
    }
    for (const workers of [1, 2]) {
      const result = await backlog(database.db, store, receiver, {
        url: database.url,
        key,
        workers,
        endpoints: 10,
        transfers: 300,
      });
      rows.push([
        `backlog, 10 endpoints, ${workers} worker${workers > 1 ? 's' : ''}`,
        String(result.deliveries),
        `${Math.round(result.deliveries / result.seconds)}`,
        '',
        '',
      ]);
    }
    for (const workers of [1, 2]) {
      const result = await steady(database.db, store, receiver, {
        url: database.url,
        key,
        workers,
        eventsPerSecond: 500,
        seconds: 8,
      });
      rows.push([
        `steady ${Math.round(result.produced)} events/s, 1 endpoint, ${workers} worker${workers > 1 ? 's' : ''}`,
        String(result.deliveries),
        `${Math.round(result.deliveries / result.seconds)}`,
        result.p50.toFixed(1),
        result.p99.toFixed(1),
      ]);
    }
  } finally {
    await receiver.close();
    await database.drop();
  }
  const header = ['scenario', 'deliveries', 'deliveries/s', 'lag p50 ms', 'lag p99 ms'];
  const lines = [header, header.map(() => '---'), ...rows].map((row) => `| ${row.join(' | ')} |`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** A healthy receiver: answers 200 at once and notes when each event arrived and how late. */
async function startReceiver() {
  let count = 0;
  let lags: number[] = [];
  let waiter: { target: number; resolve: () => void } | undefined;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const receivedAt = Date.now();
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { createdAt: string };
      lags.push(receivedAt - Date.parse(event.createdAt));
      count++;
      response.writeHead(200).end();
      if (waiter && count >= waiter.target) waiter.resolve();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    reset() {
      count = 0;
      lags = [];
    },
    get lags() {
      return lags;
    },
    /** Resolves once `target` deliveries have arrived since the last reset. */
    until(target: number) {
      return new Promise<void>((resolve) => {
        if (count >= target) return resolve();
        waiter = { target, resolve };
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function startWorkers(count: number, url: string, key: Buffer): Promise<ChildProcess[]> {
  const children = Array.from({ length: count }, () =>
    fork(import.meta.filename, ['--worker', url, key.toString('hex')], { stdio: 'inherit' }),
  );
  await Promise.all(
    children.map((child) => new Promise<void>((resolve) => child.once('message', () => resolve()))),
  );
  return children;
}

async function stopWorkers(children: ChildProcess[]) {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.send('stop');
        }),
    ),
  );
}

/** A fresh integration with `endpoints` endpoints at the receiver and `transfers` quotes. */
async function setUp(db: Db, store: Store, receiver: Receiver, endpoints: number, transfers: number) {
  const now = new Date();
  const integration = await store.integrations.create({
    name: `bench-${randomBytes(3).toString('hex')}`,
    settings: {},
    now,
  });
  const owner: Owner = { integrationId: integration.id, mode: 'test' };
  for (let index = 0; index < endpoints; index++) {
    await store.webhooks.create(
      owner,
      { url: `${receiver.url}?endpoint=${index}`, events: null, secret: newWebhookSecret(), now },
      10,
    );
  }
  // One quote made properly, then cloned in bulk (its quote_created event is not part of the run).
  const template = await db.transaction((tx) =>
    store.transfers.insertQuote(tx, owner, {
      externalId: null,
      fingerprint: randomBytes(32),
      tokenMint: address('So11111111111111111111111111111111111111112'),
      tokenSymbol: 'SOL',
      tokenDecimals: 9,
      amountRaw: 2_000_000_000n,
      amountTokens: '2',
      sourceOwner: address('Vote111111111111111111111111111111111111111'),
      recipientWallet: address('Stake11111111111111111111111111111111111111'),
      hops: 3,
      arrivalSeconds: 600,
      tokenPriceUsd: '150',
      priceSource: 'fixed',
      usdEquivalent: 300,
      pricingTier: 'standard',
      percentFeeBps: 100,
      percentFeeRaw: 20_000_000n,
      integratorPercentShareRaw: 6_000_000n,
      netDeliveredRaw: 1_980_000_000n,
      flatFeeLamportsPerHop: 10_000n,
      totalFlatFeeLamports: 30_000n,
      integratorFlatShareLamports: 9_000n,
      quotedAt: now,
      expiresAt: new Date(now.getTime() + 15 * 60_000),
    }),
  );
  if (template.kind !== 'created') throw new Error('could not create the template transfer');
  await db.query(`UPDATE webhook_deliveries SET status = 'succeeded' WHERE status = 'pending'`);
  const { rows } = await db.query<{ id: string; support_bundle_id: string }>(
    `INSERT INTO transfers (integration_id, mode, support_bundle_id, create_fingerprint, token_mint, token_symbol,
       token_decimals, amount_raw, amount_tokens, source_owner, recipient_wallet, funding_strategy, hops,
       arrival_seconds, token_price_usd, price_source, usd_equivalent, pricing_tier, percent_fee_bps, percent_fee_raw,
       integrator_percent_share_raw, net_delivered_raw, flat_fee_lamports_per_hop, total_flat_fee_lamports,
       integrator_flat_share_lamports, status, phase, quoted_at, expires_at, created_at, updated_at)
     SELECT integration_id, mode, 'B' || n || '-' || md5(random()::text), create_fingerprint, token_mint, token_symbol,
       token_decimals, amount_raw, amount_tokens, source_owner, recipient_wallet, funding_strategy, hops,
       arrival_seconds, token_price_usd, price_source, usd_equivalent, pricing_tier, percent_fee_bps, percent_fee_raw,
       integrator_percent_share_raw, net_delivered_raw, flat_fee_lamports_per_hop, total_flat_fee_lamports,
       integrator_flat_share_lamports, status, phase, quoted_at, expires_at, created_at, updated_at
       FROM transfers, generate_series(1, $2) AS n WHERE id = $1
     RETURNING id, support_bundle_id`,
    [template.transfer.id, transfers],
  );
  const clones: Transfer[] = rows.map((row) => ({
    ...template.transfer,
    id: Number(row.id),
    supportBundleId: row.support_bundle_id,
  }));
  return { clones };
}

/** Appends events to one transfer in its own transaction, as a state change would. */
async function emit(db: Db, transfer: Transfer, types: EventType[]) {
  await db.transaction((tx) => appendTransferEvents(tx, transfer, types, new Date()));
}

/** Loads a backlog (every transfer gets the 4 lifecycle events), then times its delivery. */
async function backlog(
  db: Db,
  store: Store,
  receiver: Receiver,
  options: { url: string; key: Buffer; workers: number; endpoints: number; transfers: number },
) {
  const { clones } = await setUp(db, store, receiver, options.endpoints, options.transfers);
  const queue = [...clones];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let transfer = queue.pop(); transfer !== undefined; transfer = queue.pop())
        await emit(db, transfer, LIFECYCLE);
    }),
  );
  const deliveries = clones.length * LIFECYCLE.length * options.endpoints;
  const children = await startWorkers(options.workers, options.url, options.key);
  receiver.reset();
  const started = performance.now();
  for (const child of children) child.send('go');
  await receiver.until(deliveries);
  const seconds = (performance.now() - started) / 1000;
  await stopWorkers(children);
  return { deliveries, seconds };
}

/** Produces events at a steady rate while workers run; reports throughput and event-to-arrival lag. */
async function steady(
  db: Db,
  store: Store,
  receiver: Receiver,
  options: { url: string; key: Buffer; workers: number; eventsPerSecond: number; seconds: number },
) {
  const total = options.eventsPerSecond * options.seconds;
  const { clones } = await setUp(db, store, receiver, 1, total);
  const children = await startWorkers(options.workers, options.url, options.key);
  for (const child of children) child.send('go');
  receiver.reset();
  const started = performance.now();
  const tickMs = 20;
  const perTick = (options.eventsPerSecond * tickMs) / 1000;
  let next = 0;
  const producing = new Set<Promise<void>>();
  while (next < total) {
    // Each tick starts its events without waiting for the previous ticks' to commit.
    for (const transfer of clones.slice(next, next + perTick)) {
      const emitting = emit(db, transfer, ['transfer.processing']).then(() => {
        producing.delete(emitting);
      });
      producing.add(emitting);
    }
    next += perTick;
    const wait = started + (next / options.eventsPerSecond) * 1000 - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    while (producing.size > 50) await Promise.race(producing);
  }
  await Promise.all(producing);
  // The rate actually achieved (the producer shares the machine with everything else).
  const produced = total / ((performance.now() - started) / 1000);
  await receiver.until(total);
  const seconds = (performance.now() - started) / 1000;
  await stopWorkers(children);
  const sorted = [...receiver.lags].sort((a, b) => a - b);
  const percentile = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
  return { deliveries: total, seconds, produced, p50: percentile(50), p99: percentile(99) };
}
