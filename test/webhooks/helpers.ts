import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import type { EventType, TransferPhase, TransferStatus } from '../../src/domain/transfer.ts';
import { appendTransferEvents } from '../../src/store/events.ts';
import { createWebhookSender } from '../../src/webhooks/sender.ts';
import {
  createWebhookDeliveryWorker,
  type WebhookDeliveryWorkerOptions,
} from '../../src/workers/webhook-delivery.ts';
import { type Caller, callerFor, createTransfer, type TestApp } from '../helpers/app.ts';

export { createTransfer, SOL_MINT } from '../helpers/app.ts';

export const silentLog = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

/** What a test receiver does with one request: answer with a status, or hold it until released. */
export type Answer = { status: number } | 'hold';

export interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
  event: { id: string; type: string; sequence?: number; data: { transfer?: { id: number } } };
}

/**
 * A real HTTP server on 127.0.0.1 for delivery tests: decides each answer with `answer`, can hold
 * requests open (a slow receiver) until `release()`, counts requests in flight, and can stop and
 * listen again on the same port (a receiver that is down, then back).
 */
export async function startTestReceiver(answer: (delivery: Delivery) => Answer = () => ({ status: 200 })) {
  let decide = answer;
  const received: Delivery[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let held: (() => void)[] = [];
  let server: Server | undefined;
  let port = 0;

  async function listen() {
    server = createServer((request, response) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const delivery: Delivery = { headers: request.headers, body, event: JSON.parse(body) };
        received.push(delivery);
        const reply = (status: number) => {
          inFlight--;
          if (!response.destroyed) response.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
        };
        const decision = decide(delivery);
        if (decision === 'hold') held.push(() => reply(200));
        else reply(decision.status);
      });
    });
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  }

  await listen();
  return {
    get url() {
      return `http://127.0.0.1:${port}/hooks`;
    },
    received,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    /** Changes how later requests are answered. */
    answerWith(next: (delivery: Delivery) => Answer) {
      decide = next;
    },
    /** Answers every held request with 200. */
    release() {
      const waiting = held;
      held = [];
      for (const reply of waiting) reply();
    },
    /** Stops listening: connections are refused until `restart()`. */
    async stop() {
      server!.closeAllConnections();
      await new Promise<void>((resolve) => server!.close(() => resolve()));
      held = [];
      inFlight = 0;
    },
    /** Listens again on the same port. */
    restart: listen,
    close() {
      return this.stop();
    },
  };
}

export type TestReceiver = Awaited<ReturnType<typeof startTestReceiver>>;

/** Waits (in real time, polling) until `condition` holds; fails after `timeoutMs`. */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 5_000,
  what = 'condition',
) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A delivery worker on the test app's database and clock, with its own connection pool to receivers. */
export function workerFor(t: TestApp, options: Partial<WebhookDeliveryWorkerOptions> = {}) {
  const sender = createWebhookSender({ requireHttps: false, allowPrivateNetworks: true });
  const worker = createWebhookDeliveryWorker({
    db: t.database.db,
    deliveries: t.store.deliveries,
    sender,
    clock: t.clock,
    log: silentLog,
    random: () => 0.5,
    ...options,
    worker: options.worker ?? t.worker,
  });
  let closed: Promise<void> | undefined;
  return {
    ...worker,
    /** Stops the worker and closes its connections; safe to call twice. */
    close() {
      closed ??= worker.stop().then(() => sender.close());
      return closed;
    },
  };
}

/**
 * Creates transfers through the API for one integration without hitting the per-key rate limit
 * (10 creates per minute of real time): a fresh key of the same integration every 10 creates.
 */
export function transferFactory(t: TestApp, caller: Caller) {
  let current = caller;
  let created = 0;
  return async () => {
    if (created > 0 && created % 10 === 0) {
      current = callerFor(t.app, caller.integrationId, await t.createKey(caller.integrationId));
    }
    created++;
    return createTransfer(current);
  };
}

/**
 * Emits events of a transfer as the services that change transfers do: the state change (if any)
 * and its events in one transaction that locks the transfer row, through the outbox.
 */
export async function emit(
  t: TestApp,
  caller: Caller,
  transferId: number,
  types: EventType[],
  change?: { status: TransferStatus; phase: TransferPhase },
) {
  const owner = { integrationId: caller.integrationId, mode: 'test' as const };
  const before = await t.store.transfers.get(owner, transferId);
  if (!before) throw new Error(`no transfer ${transferId}`);
  await t.database.db.transaction(async (tx) => {
    await tx.query('SELECT 1 FROM transfers WHERE id = $1 FOR UPDATE', [transferId]);
    if (change) {
      await tx.query('UPDATE transfers SET status = $2, phase = $3, updated_at = $4 WHERE id = $1', [
        transferId,
        change.status,
        change.phase,
        t.clock.now(),
      ]);
    }
    const transfer = change ? { ...before, ...change, updatedAt: t.clock.now() } : before;
    await appendTransferEvents(tx, transfer, types, t.clock.now());
  });
}

/** Registers an endpoint through the API; returns its id and secret. */
export async function registerEndpoint(
  caller: Caller,
  url: string,
  events?: EventType[],
): Promise<{ id: number; secret: string }> {
  const response = await caller.post('/api/v1/webhooks', { url, ...(events ? { events } : {}) });
  if (response.statusCode !== 200) throw new Error(`register failed: ${response.body}`);
  return response.json();
}

/** The deliveries of an endpoint as stored, by event sequence. */
export async function deliveryRows(t: TestApp, endpointId: number) {
  const { rows } = await t.database.db.query<{
    event_id: string;
    status: string;
    attempts: number;
    next_attempt_at: Date;
    lease_token: string | null;
  }>(
    `SELECT event_id, status, attempts, next_attempt_at, lease_token FROM webhook_deliveries
      WHERE endpoint_id = $1 ORDER BY transfer_id, sequence, id`,
    [endpointId],
  );
  return rows;
}
