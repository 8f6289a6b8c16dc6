// The client's recovery helpers against the service, as an integrator's backend and its user's
// wallet use them: a failed route rescued, a completed route's rent reclaimed, each resumable.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Address } from '@solana/kit';
import {
  isTransferRouterError,
  type RecoveryProgress,
  reclaimRent,
  rescue,
  signAndBroadcastBundle,
  type TransferRouterClient,
} from '../../clients/typescript/src/index.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { failLastHop, feesPaidBy, lamports } from '../recovery/helpers.ts';
import { clientFor, holding, kitRpc, listen, quoteWithClient, runHops } from './helpers.ts';

const ARRIVAL_SECONDS = 60;

describe('the TypeScript client’s rescue and reclaimRent, against the service', () => {
  let t: TestApp;
  let client: TransferRouterClient;
  let usdc: Address;
  before(async () => {
    t = await createTestApp();
    const caller = await t.newCaller('test', { rateLimitMultiplier: 100 });
    client = clientFor(await listen(t), caller);
    usdc = await createMint(t.chain, { decimals: 6 });
  });
  after(() => t.close());

  const quote = () => quoteWithClient(t, client, { mint: usdc, hops: 3, arrivalSeconds: ARRIVAL_SECONDS });
  const chainNow = async () => (await t.chain.chain.getClock()).unixTimestamp;
  /** Moves the chain past a bundle's last valid block height: its blockhash has expired. */
  const expire = (bundle: { lastValidBlockHeight: number }) =>
    t.chain.cheats.timeTravel({ absoluteSlot: bundle.lastValidBlockHeight + 1 });

  /** Deploys a quoted route with the client, as the source's wallet does; answers the chain's time before. */
  async function deploy(route: Awaited<ReturnType<typeof quote>>) {
    const deployedAt = await chainNow();
    await signAndBroadcastBundle(client, { transferId: route.id, signer: route.source, ...kitRpc(t) });
    return deployedAt;
  }

  /**
   * Runs a recovery; answers its result and what it gave the source in lamports: the balance's
   * change with the network fees the source paid added back.
   */
  async function measured<T>(source: Address, recover: () => Promise<T>) {
    const [balance, fees] = [await lamports(t, source), await feesPaidBy(t, source)];
    const result = await recover();
    const received = (await lamports(t, source)) - balance + ((await feesPaidBy(t, source)) - fees);
    return { ...result, received };
  }

  /** A deployed route whose last hop failed for good: the keeper marked it failed. */
  async function failedRoute() {
    const route = await quote();
    await deploy(route);
    await failLastHop(t, route);
    return route;
  }

  /**
   * Rescues `route` with the client, noting its progress; `beforeFirstSend` runs once the first
   * bundle is prepared, before any of it is sent.
   */
  async function rescueNoting(
    route: Awaited<ReturnType<typeof quote>>,
    beforeFirstSend: (lifetime: { lastValidBlockHeight: number }) => Promise<unknown>,
  ) {
    const progress: RecoveryProgress[] = [];
    const result = await measured(route.source.address, () =>
      rescue(client, {
        transferId: route.id,
        signer: route.source,
        ...kitRpc(t),
        onProgress: async (event) => {
          progress.push(event);
          if (event.kind === 'prepared' && !event.resumed) await beforeFirstSend(event.lifetime);
        },
      }),
    );
    return { ...result, progress };
  }

  test('rescue: a route whose last hop can never land comes back to the source, through a blockhash that expired; a second run finds it done', async () => {
    const route = await failedRoute();
    const failed = await client.getTransfer(route.id);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.recovery?.canRescue, true);
    const tokensBefore = await holding(t, route.source.address, usdc);

    // The wallet's user waits too long before approving the first bundle.
    const { transfer, signatures, received, progress } = await rescueNoting(route, expire);
    assert.equal(transfer.phase, 'rescued');
    assert.equal(transfer.status, 'refunded');
    assert.equal(transfer.recovery?.canRescue, false);
    const first = progress[1];
    assert.equal(first?.kind, 'stale');
    assert.equal(first.kind === 'stale' && first.reason, 'blockhash_expired');
    assert.deepEqual(
      progress.map((event) => event.kind),
      ['prepared', 'stale', 'reported', 'prepared', ...signatures.map(() => 'confirmed'), 'reported'],
    );
    assert.ok(signatures.length >= 1);
    assert.equal(received, BigInt(failed.recovery!.rescuableLamports), 'the rescuable lamports, exactly');
    assert.equal(
      (await holding(t, route.source.address, usdc)) - tokensBefore,
      BigInt(route.created.amountRaw),
      'the whole amount back',
    );

    const again = await rescue(client, { transferId: route.id, signer: route.source, ...kitRpc(t) });
    assert.deepEqual(again.signatures, []);
    assert.equal(again.transfer.phase, 'rescued');
  });

  test('rescue run twice at once (a user who clicks twice): the later bundle does it; the earlier finds the route gone and ends rescued', async () => {
    const route = await failedRoute();
    const rescuable = BigInt((await client.getTransfer(route.id)).recovery!.rescuableLamports);
    let second: Awaited<ReturnType<typeof rescue>> | undefined;
    // Between the first run's prepare and its broadcast, a second run rescues the route, a slot
    // later: its bundle has another blockhash. (In the same slot it would be the same bytes, which
    // the first run would find landed.)
    const first = await rescueNoting(route, async () => {
      await t.chain.cheats.timeTravel({ absoluteSlot: Number(await t.chain.chain.getSlot()) + 1 });
      second = await rescue(client, { transferId: route.id, signer: route.source, ...kitRpc(t) });
    });
    assert.equal(second?.transfer.phase, 'rescued');
    assert.ok(second.signatures.length >= 1);
    assert.deepEqual(
      first.progress.map((event) => (event.kind === 'stale' ? `stale:${event.reason}` : event.kind)),
      ['prepared', 'stale:chain_changed', 'reported'],
    );
    assert.deepEqual(first.signatures, [], 'nothing of the first bundle landed');
    assert.equal(first.transfer.phase, 'rescued');
    assert.equal(first.transfer.status, 'refunded');
    assert.equal(first.received, rescuable, 'the source got everything once');
  });

  test('reclaimRent: a completed route gives back its rent and the keeper’s leftover; a second run finds nothing left', async () => {
    const route = await quote();
    const deployedAt = await deploy(route);
    await runHops(t, { id: route.id, hops: route.hops, arrivalSeconds: ARRIVAL_SECONDS, deployedAt });
    const settled = await client.getTransfer(route.id);
    assert.equal(settled.phase, 'settled');
    assert.equal(settled.recovery?.canReclaimRent, true);

    const progress: RecoveryProgress[] = [];
    const { transfer, signatures, received } = await measured(route.source.address, () =>
      reclaimRent(client, {
        transferId: route.id,
        signer: route.source,
        ...kitRpc(t),
        onProgress: (event) => void progress.push(event),
      }),
    );
    assert.equal(transfer.phase, 'reclaimed');
    assert.ok(signatures.length >= 1);
    assert.equal(transfer.status, 'completed');
    assert.equal(transfer.recovery?.canReclaimRent, false);
    assert.equal(
      received,
      BigInt(settled.recovery!.reclaimableLamports),
      'the reclaimable lamports, exactly',
    );
    const prepared = progress[0];
    assert.equal(
      prepared?.kind === 'prepared' && prepared.totalLamports,
      settled.recovery!.reclaimableLamports,
    );

    const again = await reclaimRent(client, { transferId: route.id, signer: route.source, ...kitRpc(t) });
    assert.deepEqual(again.signatures, []);
    assert.equal(again.transfer.phase, 'reclaimed');
    // A transfer that never ran has nothing to rescue: the service's error, with its code.
    const unused = await quote();
    await assert.rejects(
      rescue(client, { transferId: unused.id, signer: unused.source, ...kitRpc(t) }),
      (caught: unknown) => isTransferRouterError(caught, 'MH_080'),
    );
  });
});
