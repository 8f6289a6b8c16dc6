// A worker process killed with SIGKILL right after it sent a hop, while it held a webhook
// delivery: the hop it sent lands on its own, another worker records it and runs the next hop on
// time, and the delivery is tried again on the retry schedule, not after a lease of minutes. The
// workers are `npm run worker` processes on the test app's database and chain; the chain runs in
// real time (the test's clock follows the system's), moved forward between hops so that the test
// does not wait out a route's whole schedule.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Address, Signature } from '@solana/kit';
import { generatePlatformKeys } from '../../src/platform/local-keys.ts';
import { type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { type ServiceProcess, startServiceProcess } from '../helpers/process.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { deployRoute, quoteRoute } from '../helpers/route.ts';
import { assertCarriedOnce, routeOnChain, travelTo } from '../keeper/helpers.ts';
import { waitUntil, workerProcessEnv } from '../keeper/worker-process.ts';

/** How long before a hop falls due the chain is moved to: more than a worker's longest sleep (5 s). */
const LEAD_SECONDS = 6n;
/** Seconds from due time to landing (the block's time) that count as on time here. */
const ON_TIME_SECONDS = 2;

describe('a worker killed right after it sends a hop', () => {
  const keys = generatePlatformKeys();
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  let ticker: NodeJS.Timeout;
  const workers: ServiceProcess[] = [];
  before(async () => {
    t = await createTestApp({ platform: { keys } });
    // The chain follows the test's clock: from now on it runs in real time, as the workers' own clocks do.
    let last = Date.now();
    t.clock.set(new Date(last));
    ticker = setInterval(() => {
      const now = Date.now();
      t.clock.advance(now - last);
      last = now;
    }, 20);
    caller = await t.newCaller('test', { rateLimitMultiplier: 1000 });
    usdc = await createMint(t.chain, { decimals: 6 });
  });
  after(async () => {
    await Promise.all(workers.map((worker) => worker.stop('SIGKILL')));
    clearInterval(ticker);
    await t.close();
  });

  const startWorker = async () => {
    const worker = await startServiceProcess(
      { ...workerProcessEnv(t, keys), LOG_LEVEL: 'debug' },
      { workersOnly: true },
    );
    workers.push(worker);
    return worker;
  };

  test('its hop and the next land on time, and its webhook delivery is retried on schedule', async () => {
    const receiver = await startReceiver();
    const endpoint = await caller.post('/api/v1/webhooks', { url: receiver.url });
    assert.equal(endpoint.statusCode, 200, endpoint.body);
    const verification = receiver.received.length;
    receiver.respondWith('hang');
    try {
      const doomed = await startWorker();
      const quoted = await quoteRoute(t, caller, { hops: 3, mint: usdc, arrivalSeconds: 60 });
      await deployRoute(t, caller, quoted);
      const eventsBefore = await eventCount(t, quoted.id);
      const { route } = await routeOnChain(t, quoted.id);
      const dueAt = (step: number) => route.firstReleaseAt + BigInt(step) * route.intervalSecs;

      // The doomed worker holds the transfer's first event: the receiver does not answer it.
      await waitUntil(
        async () => receiver.received.length === verification + 1,
        'the first event was sent',
        10_000,
      );
      await travelTo(t, dueAt(0) - LEAD_SECONDS);
      await waitUntil(
        async () => sentHop(doomed, quoted.id, 0),
        'the doomed worker sent hop 1',
        Number(LEAD_SECONDS) * 1000 + 10_000,
      );
      doomed.child.kill('SIGKILL');
      receiver.respondWith({ status: 200 });

      await startWorker();
      for (const step of [1, 2]) {
        await waitUntil(
          async () => (await hopsCompleted(t, quoted.id)) === step,
          `hop ${step} recorded`,
          20_000,
        );
        await travelTo(t, dueAt(step) - LEAD_SECONDS);
      }
      await waitUntil(async () => (await hopsCompleted(t, quoted.id)) === 3, 'the route completed', 20_000);

      const signatures = await hopSignatures(t, quoted.id);
      for (const [step, signature] of signatures.entries()) {
        const landed = await t.chain.chain.getTransaction(signature);
        const late = Number(landed!.blockTime!) - Number(dueAt(step));
        assert.ok(late <= ON_TIME_SECONDS, `hop ${step + 1} landed ${late} s after it fell due`);
      }
      await assertCarriedOnce(t, { ...quoted, hops: 3, recipientBefore: 0n, eventsBefore });

      // Every event reached the receiver; the one the dead worker held was sent again about 10 s
      // (the first retry's delay) after its attempt, not a minute later.
      const outbox = await eventIds(t, quoted.id);
      await waitUntil(
        async () => outbox.every((id) => received(receiver).some((event) => event.id === id)),
        'every event delivered',
        30_000,
      );
      const first = received(receiver)[0]!;
      const again = received(receiver).filter((event) => event.id === first.id);
      assert.equal(again.length, 2, 'the held event was sent twice: once to the dead worker’s hung request');
      const retriedAfter = again[1]!.at - again[0]!.at;
      assert.ok(
        retriedAfter >= 8_000 && retriedAfter < 30_000,
        `retried ${retriedAfter} ms after its attempt`,
      );
      const sequences = received(receiver)
        .filter((event, index, all) => all.findIndex((other) => other.id === event.id) === index)
        .map((event) => event.sequence);
      assert.deepEqual(
        sequences,
        sequences.map((_, index) => index + 1),
        'each event once, in order, without a gap',
      );
    } finally {
      await receiver.close();
    }
  });
});

/** Whether a worker logged sending hop `step` of a transfer. */
function sentHop(worker: ServiceProcess, transferId: number, step: number): boolean {
  return worker.logs.some(
    (line) =>
      line.includes('"hop sent"') &&
      line.includes(`"transferId":${transferId},`) &&
      line.includes(`"step":${step},`),
  );
}

/** The transfer events the receiver got (not the endpoint's `ping`): each one's id, sequence and arrival. */
function received(receiver: Awaited<ReturnType<typeof startReceiver>>) {
  return receiver.received.flatMap((request) => {
    if (JSON.parse(request.body).type === 'ping') return [];
    const event = JSON.parse(request.body) as { id: string; sequence: number };
    return [{ id: event.id, sequence: event.sequence, at: request.receivedAt }];
  });
}

async function hopsCompleted(t: TestApp, id: number): Promise<number> {
  const { rows } = await t.database.db.query<{ hops_completed: number }>(
    'SELECT hops_completed FROM transfers WHERE id = $1',
    [id],
  );
  return rows[0]!.hops_completed;
}

async function hopSignatures(t: TestApp, id: number): Promise<Signature[]> {
  const { rows } = await t.database.db.query<{ hops: Signature[] }>(
    `SELECT signatures->'hops' AS hops FROM transfers WHERE id = $1`,
    [id],
  );
  return rows[0]!.hops;
}

async function eventCount(t: TestApp, id: number): Promise<number> {
  return (await eventIds(t, id)).length;
}

async function eventIds(t: TestApp, id: number): Promise<string[]> {
  const { rows } = await t.database.db.query<{ id: string }>(
    'SELECT id FROM events WHERE transfer_id = $1 ORDER BY sequence',
    [id],
  );
  return rows.map((row) => row.id);
}
