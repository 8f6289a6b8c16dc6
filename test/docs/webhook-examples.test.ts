import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type Address, generateKeyPairSigner } from '@solana/kit';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { signAndBroadcastBundle } from '../../clients/typescript/src/index.ts';
import { createExpiryWorker } from '../../src/workers/expiry.ts';
import { clientFor, fundedWallet, kitRpc, listen, runHops } from '../client/helpers.ts';
import { type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { broadcastBundle } from '../helpers/wallet.ts';
import { silentLog, startTestReceiver, workerFor } from '../webhooks/helpers.ts';

// docs/webhooks.md shows one delivered payload of each event type. They come from real deliveries
// of this test: it runs a route to completion, lets a quote expire and abandons a deployment
// half-way, and checks that every example in the page has the shape, status and phase of an event
// the service really sent. `UPDATE_WEBHOOK_EXAMPLES=1` rewrites the examples from this run.

const PAGE = join(import.meta.dirname, '..', '..', 'docs', 'webhooks.md');
const START = '<!-- examples: written by test/docs/webhook-examples.test.ts -->';
const END = '<!-- end of examples -->';

type Delivered = { type: string; data: { transfer?: { status: string; phase: string } } } & Record<
  string,
  unknown
>;

/** A value's structure: key names and value types, recursively (an array by its first item). */
function shape(value: unknown): unknown {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? ['empty'] : [shape(value[0])];
  if (typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as object)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, entry]) => [key, shape(entry)]),
    );
  }
  return typeof value;
}

/** The examples in the page's section, in order. */
function examplesIn(page: string): Delivered[] {
  const section = page.slice(page.indexOf(START), page.indexOf(END));
  assert.ok(page.includes(START) && page.includes(END), 'docs/webhooks.md has its examples section');
  return [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => JSON.parse(match[1]!));
}

/** What a real delivery of each example's type looked like; which ones the page shows. */
const SHOWN: { type: string; phase?: string; hops?: number; note: string }[] = [
  { type: 'ping', note: 'sent when an endpoint is registered and by the test tool' },
  { type: 'transfer.quote_created', note: 'the transfer is created' },
  { type: 'transfer.deposit_confirmed', note: 'the route holding the tokens is verified on chain' },
  { type: 'transfer.processing', note: 'the keeper takes the route over' },
  {
    type: 'transfer.phase_changed',
    phase: 'executing',
    note: 'any phase change; here the route is deployed',
  },
  { type: 'transfer.hop_complete', hops: 1, note: 'one per hop; here the first of three' },
  { type: 'transfer.completed', note: 'the recipient is paid; `recovery` says what a rent reclaim returns' },
  { type: 'transfer.expired', note: 'a quote nobody prepared in time' },
  { type: 'transfer.failed', note: 'here a deployment abandoned half-way' },
  { type: 'transfer.recoverable', note: 'the source can rescue its funds: `recovery` says what' },
];

/** The section as the page holds it: one collapsible example per shown type. */
function section(events: Delivered[]): string {
  const blocks = SHOWN.map((shown) => {
    const event = pick(events, shown);
    return [
      '<details>',
      `<summary><code>${shown.type}</code>: ${shown.note}</summary>`,
      '',
      '```json',
      JSON.stringify(event, null, 2),
      '```',
      '',
      '</details>',
    ].join('\n');
  });
  return `${START}\n\n${blocks.join('\n\n')}\n\n${END}`;
}

function pick(events: Delivered[], shown: (typeof SHOWN)[number]): Delivered {
  const found = events.find(
    (event) =>
      event.type === shown.type &&
      (shown.phase === undefined || event.data.transfer?.phase === shown.phase) &&
      (shown.hops === undefined ||
        (event.data.transfer as { progress?: { hopsCompleted: number } } | undefined)?.progress
          ?.hopsCompleted === shown.hops),
  );
  assert.ok(found, `a ${shown.type} event was delivered`);
  return found;
}

let t: TestApp;
let caller: Caller;
let mint: Address;
let delivered: Delivered[];
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
before(async () => {
  t = await createTestApp();
  caller = await t.newCaller('test', { rateLimitMultiplier: 100 });
  const client = clientFor(await listen(t), caller);
  mint = await createMint(t.chain, { decimals: 6 });
  const receiver = await startTestReceiver();
  const worker = workerFor(t);
  let orders = 1000;
  /** A quote of 250 tokens over 3 hops from a funded wallet. */
  const quote = async () => {
    const source = await fundedWallet(t, mint, 250_000_000n);
    const created = await client.createTransfer({
      tokenMint: mint,
      amountRaw: '250000000',
      amountTokens: '250',
      hops: 3,
      arrivalSeconds: 60,
      tokenPriceUsd: 1,
      externalId: `order-${++orders}`,
      sourceOwner: source.address,
      recipientWallet: (await generateKeyPairSigner()).address,
    });
    return { id: created.id, source };
  };
  try {
    await client.createWebhook({ url: receiver.url });

    // A route to completion.
    const completed = await quote();
    const deployedAt = (await t.chain.chain.getClock()).unixTimestamp;
    await signAndBroadcastBundle(client, {
      transferId: completed.id,
      signer: completed.source,
      ...kitRpc(t),
    });
    // The service's clock moves with the chain's, so that the events carry the times they would.
    await runHops(
      t,
      { id: completed.id, hops: 3, arrivalSeconds: 60, deployedAt },
      { before: () => t.clock.advance(20_000) },
    );

    // A quote left to expire, and a deployment abandoned after the route's creation.
    const expired = await quote();
    const abandoned = await quote();
    const { preparedTxs } = await client.prepareTransfer(abandoned.id);
    await broadcastBundle(t.chain.chain, abandoned.source, preparedTxs, { through: 'routeInit' });
    // Ten minutes after expiresAt (15 minutes after the quote) the deployment counts as abandoned.
    t.clock.advance(26 * 60_000);
    await createExpiryWorker({ transfers: t.store.transfers, clock: t.clock, log: silentLog }).runOnce();
    assert.equal((await client.refreshFunding(abandoned.id)).transfer.phase, 'recoverable');
    assert.equal((await client.getTransfer(expired.id)).status, 'expired');

    while ((await worker.runOnce()) > 0);
    delivered = receiver.received.map((delivery) => JSON.parse(delivery.body));

    const document = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    ajv.addSchema({ $id: 'doc', components: document.components });
  } finally {
    await worker.close();
    await receiver.close();
  }
});
after(() => t.close());

test('docs/webhooks.md shows a payload of each event type exactly as the service delivers it', async () => {
  const page = await readFile(PAGE, 'utf8');
  if (process.env.UPDATE_WEBHOOK_EXAMPLES) {
    const updated =
      page.slice(0, page.indexOf(START)) + section(delivered) + page.slice(page.indexOf(END) + END.length);
    await writeFile(PAGE, updated);
  }
  const examples = examplesIn(await readFile(PAGE, 'utf8'));
  assert.deepEqual(
    examples.map((example) => example.type),
    SHOWN.map((shown) => shown.type),
  );
  for (const [index, example] of examples.entries()) {
    const real = pick(delivered, SHOWN[index]!);
    assert.deepEqual(shape(example), shape(real), `${example.type}: the example has the delivered shape`);
    assert.equal(example.data.transfer?.status, real.data.transfer?.status, `${example.type}: status`);
    assert.equal(example.data.transfer?.phase, real.data.transfer?.phase, `${example.type}: phase`);
  }
});

test('the examples and the deliveries match the Event schema of the OpenAPI document', async () => {
  // A delivery is the event as GET /events lists it, without the delivery report.
  const validate = ajv.compile({
    allOf: [{ $ref: 'doc#/components/schemas/Event' }],
    $defs: {},
  });
  const report = { deliverySuccess: true, deliveries: [] };
  const examples = examplesIn(await readFile(PAGE, 'utf8'));
  for (const event of [...delivered, ...examples].filter((entry) => entry.type !== 'ping')) {
    assert.ok(validate({ ...event, ...report }), `${event.type}: ${ajv.errorsText(validate.errors)}`);
  }
});
