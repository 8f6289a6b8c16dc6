import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type Address, generateKeyPairSigner, type KeyPairSigner } from '@solana/kit';
import {
  type BroadcastProgress,
  isTransferRouterError,
  signAndBroadcastBundle,
  type TransferRouterClient,
  TransferRouterError,
  TransferWaitError,
  waitForTransfer,
} from '../../clients/typescript/src/index.ts';
import { createWebhookReceiver } from '../../clients/typescript/src/webhooks.ts';
import { createExpiryWorker } from '../../src/workers/expiry.ts';
import { type Caller, createTestApp, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { silentLog, workerFor } from '../webhooks/helpers.ts';
import { clientFor, holding, kitRpc, listen, quoteWithClient, runHops } from './helpers.ts';

const ARRIVAL_SECONDS = 60;

/** Progress in short: `kind` or `kind:group`, one entry per run of equal ones. */
const outline = (progress: BroadcastProgress[]) =>
  progress
    .map((event) => ('group' in event ? `${event.kind}:${event.group}` : event.kind))
    .filter((entry, index, all) => entry !== all[index - 1]);

describe('the TypeScript client, as an integrator uses it against the service', () => {
  let t: TestApp;
  let caller: Caller;
  let client: TransferRouterClient;
  let baseUrl: string;
  let usdc: Address;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', { rateLimitMultiplier: 100 });
    baseUrl = await listen(t);
    client = clientFor(baseUrl, caller);
    usdc = await createMint(t.chain, { decimals: 6 });
  });
  after(() => t.close());

  const quote = (mint: Address, hops = 3) =>
    quoteWithClient(t, client, { mint, hops, arrivalSeconds: ARRIVAL_SECONDS });

  const chainNow = async () => (await t.chain.chain.getClock()).unixTimestamp;

  /** Moves the chain past a bundle's last valid block height: its blockhash has expired. */
  const expire = (bundle: { lastValidBlockHeight: number }) =>
    t.chain.cheats.timeTravel({ absoluteSlot: bundle.lastValidBlockHeight + 1 });

  for (const native of [false, true]) {
    test(`${native ? 'native SOL' : 'an SPL token'}: estimate, create, signAndBroadcastBundle, waitForTransfer; the recipient gets the net amount exactly`, async () => {
      const route = await quote(native ? (SOL_MINT as Address) : usdc);
      assert.equal(route.created.status, 'quote');
      const recipientBefore = await holding(t, route.recipient, route.mint);
      const deployedAt = await chainNow();
      const progress: BroadcastProgress[] = [];
      const { transfer, signatures } = await signAndBroadcastBundle(client, {
        transferId: route.id,
        signer: route.source,
        ...kitRpc(t),
        onProgress: (event) => void progress.push(event),
      });
      assert.equal(transfer.status, 'processing');
      assert.equal(transfer.phase, 'executing');
      assert.deepEqual(outline(progress), [
        'prepared',
        'confirmed:keeperFunding',
        'keeper_funding_reported',
        'confirmed:routeInit',
        'confirmed:orchestratorInit',
        'confirmed:sessionInit',
        'reported',
      ]);
      assert.deepEqual(transfer.signatures.routeInit, signatures.routeInitSignatures);
      assert.deepEqual(transfer.signatures.sessionInit, signatures.sessionInitSignatures);

      const seen: number[] = [];
      const completed = waitForTransfer(client, route.id, {
        until: 'completed',
        pollIntervalMs: 5,
        onUpdate: (update) => seen.push(update.progress.hopsCompleted),
      });
      await runHops(t, { id: route.id, hops: route.hops, arrivalSeconds: ARRIVAL_SECONDS, deployedAt });
      const done = await completed;
      assert.equal(done.status, 'completed');
      assert.equal(done.phase, 'settled');
      assert.equal(done.progress.hopsCompleted, route.hops);
      assert.equal(seen.at(-1), route.hops);
      assert.equal(
        (await holding(t, route.recipient, route.mint)) - recipientBefore,
        BigInt(route.estimate.tokens.netDeliveredRaw),
      );
    });
  }

  test('a blockhash that expires between prepare and broadcast: the client prepares again and deploys', async () => {
    const route = await quote(usdc);
    const { preparedTxs: stale } = await client.prepareTransfer(route.id);
    await expire(stale);
    const progress: BroadcastProgress[] = [];
    const { transfer, signatures } = await signAndBroadcastBundle(client, {
      transferId: route.id,
      signer: route.source,
      ...kitRpc(t),
      bundle: stale,
      onProgress: (event) => void progress.push(event),
    });
    assert.equal(transfer.status, 'processing');
    assert.deepEqual(outline(progress), [
      'prepared',
      'blockhash_expired:keeperFunding',
      'prepared',
      'confirmed:keeperFunding',
      'keeper_funding_reported',
      'confirmed:routeInit',
      'confirmed:orchestratorInit',
      'confirmed:sessionInit',
      'reported',
    ]);
    const bundles = progress.flatMap((event) => (event.kind === 'prepared' ? [event] : []));
    assert.deepEqual(
      bundles.map((event) => event.resumed),
      [false, true],
    );
    assert.notEqual(bundles[1]!.bundle.recentBlockhash, stale.recentBlockhash);
    assert.ok(signatures.keeperFundingSignature);
  });

  test("a service whose node lags the wallet's finds the route missing at first: the client reports again, it prepares no new bundle", async () => {
    const route = await quote(usdc);
    // The service's reads show the route only from the third report on, as a node that lags would.
    let reports = 0;
    const lagging: Pick<TransferRouterClient, 'prepareTransfer' | 'confirmBroadcast'> = {
      prepareTransfer: (id, options) => client.prepareTransfer(id, options),
      async confirmBroadcast(id, report, options) {
        const answer = await client.confirmBroadcast(id, report, options);
        const final = report.routeInitSignatures.length > 0;
        if (!final || ++reports >= 3) return answer;
        return { ...answer, transfer: { ...answer.transfer, status: 'awaiting_signature' } };
      },
    };
    const progress: BroadcastProgress[] = [];
    const { transfer } = await signAndBroadcastBundle(lagging, {
      transferId: route.id,
      signer: route.source,
      ...kitRpc(t),
      onProgress: (event) => void progress.push(event),
    });
    assert.equal(transfer.status, 'processing');
    assert.equal(progress.filter((event) => event.kind === 'prepared').length, 1, 'one bundle');
    assert.equal(progress.filter((event) => event.kind === 'reported').length, 3);
  });

  test('a blockhash that expires part-way: the keeper is funded once, the rest comes from a resumed bundle', async () => {
    const route = await quote(usdc);
    const progress: BroadcastProgress[] = [];
    const { transfer, signatures } = await signAndBroadcastBundle(client, {
      transferId: route.id,
      signer: route.source,
      ...kitRpc(t),
      onProgress: async (event) => {
        progress.push(event);
        // The user leaves the tab open too long right after funding the keeper.
        if (event.kind === 'keeper_funding_reported') {
          const first = progress[0] as Extract<BroadcastProgress, { kind: 'prepared' }>;
          await expire(first.bundle);
        }
      },
    });
    assert.equal(transfer.status, 'processing');
    assert.deepEqual(outline(progress), [
      'prepared',
      'confirmed:keeperFunding',
      'keeper_funding_reported',
      'blockhash_expired:routeInit',
      'prepared',
      'confirmed:routeInit',
      'confirmed:orchestratorInit',
      'confirmed:sessionInit',
      'reported',
    ]);
    const resumed = progress.filter((event) => event.kind === 'prepared')[1]!.bundle;
    assert.equal(resumed.keeperFundingTx, null);
    assert.equal(resumed.resume.keeperAlreadyFunded, true);
    const funded = progress.find((event) => event.kind === 'confirmed' && event.group === 'keeperFunding');
    assert.equal(signatures.keeperFundingSignature, (funded as { signature: string }).signature);
  });

  test('waitForTransfer follows the transfer through verified webhook events, without polling', async () => {
    let secret: string | undefined;
    // The service signs on the test's clock; the receiver checks the signature's age on it too.
    const receiver = createWebhookReceiver({ secret: () => secret, now: () => t.clock.now() });
    const server = createServer(receiver.listener);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const worker = workerFor(t);
    let reads = 0;
    const counting = clientFor(baseUrl, caller, {
      fetch: (request) => {
        if (request.method === 'GET') reads++;
        return fetch(request);
      },
    });
    try {
      const endpoint = await client.createWebhook({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
      });
      secret = endpoint.secret ?? undefined;
      assert.match(String(secret), /^whsec_/);
      const route = await quote(usdc);
      const deployedAt = await chainNow();
      await signAndBroadcastBundle(client, { transferId: route.id, signer: route.source, ...kitRpc(t) });
      const types: string[] = [];
      receiver.subscribe((event) => {
        if (event.type !== 'ping' && event.data.transfer.id === route.id) types.push(event.type);
      });
      const completed = waitForTransfer(counting, route.id, {
        until: 'completed',
        webhooks: receiver,
        timeoutMs: 60_000,
      });
      await runHops(
        t,
        { id: route.id, hops: route.hops, arrivalSeconds: ARRIVAL_SECONDS, deployedAt },
        {
          after: () => worker.runOnce(),
        },
      );
      const done = await completed;
      assert.equal(done.status, 'completed');
      assert.equal(reads, 1, 'one read, then events only');
      assert.ok(types.includes('transfer.hop_complete'));
      assert.equal(types.at(-2), 'transfer.completed');
    } finally {
      await worker.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  test('errors carry their MH_ code, status, param and request id; a wait for a status that can no longer come fails', async () => {
    const error = await client.getTransfer(987_654_321).catch((caught: unknown) => caught);
    assert.ok(error instanceof TransferRouterError);
    assert.ok(isTransferRouterError(error, 'MH_030'));
    assert.equal(error.status, 404);
    assert.equal(error.param, 'transferId');
    assert.match(String(error.requestId), /.{8,}/);

    const invalid = await client
      .createTransfer({
        tokenMint: usdc,
        amountRaw: '250000000',
        amountTokens: '250',
        sourceOwner: (await generateKeyPairSigner()).address,
        recipientWallet: (await generateKeyPairSigner()).address,
        hops: 11,
        tokenPriceUsd: 1,
      })
      .catch((caught: unknown) => caught);
    assert.ok(isTransferRouterError(invalid, 'MH_013'));

    const route = await quote(usdc);
    await assert.rejects(
      waitForTransfer(client, route.id, { until: 'completed', pollIntervalMs: 5, timeoutMs: 50 }),
      (caught: unknown) => caught instanceof Error && caught.name === 'TimeoutError',
    );
    // A wallet that is not the transfer's source cannot sign its bundle.
    const stranger: KeyPairSigner = await generateKeyPairSigner();
    await assert.rejects(
      signAndBroadcastBundle(client, { transferId: route.id, signer: stranger, ...kitRpc(t) }),
      /the bundle is not for signer/,
    );

    // A quote left unused expires: it can never complete, and the wait says so.
    const unused = await quote(usdc);
    const waiting = waitForTransfer(client, unused.id, { until: 'completed', pollIntervalMs: 5 });
    t.clock.advance(16 * 60_000);
    const expiry = createExpiryWorker({ transfers: t.store.transfers, clock: t.clock, log: silentLog });
    assert.equal(await expiry.runOnce(), 1);
    await assert.rejects(
      waiting,
      (caught: unknown) => caught instanceof TransferWaitError && caught.transfer.status === 'expired',
    );
  });
});
