// Screening before the first hop, on a cluster that requires it: a verified route gets its deposit
// back on chain and runs; a flagged one forfeits the deposit to the platform wallet and never runs;
// a screening provider that cannot answer holds the route back and is asked again with backoff.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, generateKeyPairSigner, type KeyPairSigner } from '@solana/kit';
import { decodeRouterConfig } from '../../src/chain/router/accounts.ts';
import { createHttpScreening, createListScreening } from '../../src/screening/providers.ts';
import type { ScreeningProvider } from '../../src/use-cases/screening.ts';
import { type Caller, createTestApp, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { deployRoute, type QuotedRoute, quoteRoute, tokenBalance } from '../helpers/route.ts';
import { DEPLOYED_EVENTS, eventTypes, UNLIMITED } from '../route/helpers.ts';
import {
  chainNow,
  keeperWorker,
  lamports,
  rescuableOnChain,
  routeOnChain,
  sortAccounts,
  transferOf,
  travelTo,
} from './helpers.ts';
import { type ScreeningApi, type ScreeningApiMode, startScreeningApi } from './screening-api.ts';

const ARRIVAL = 600;
const HOPS = 3;
const INTERVAL = BigInt(Math.floor(ARRIVAL / HOPS));

/** A test app on a cluster that screens every route, with `provider` answering. */
async function screeningApp(provider: ScreeningProvider) {
  const t = await createTestApp({ platform: { settings: { screeningRequired: true }, screening: provider } });
  const config = decodeRouterConfig((await t.chain.chain.getAccount(t.platform.configAddress))!.data);
  return { t, deposit: config.screeningDepositLamports };
}

/** Deploys a 3-hop route from `source` (fresh unless given) to `recipient` (fresh unless given). */
async function deployed(
  t: TestApp,
  caller: Caller,
  options: { mint: Address; source?: KeyPairSigner; recipient?: Address },
) {
  const route = await quoteRoute(t, caller, { hops: HOPS, arrivalSeconds: ARRIVAL, ...options });
  const deployedAt = await chainNow(t);
  await deployRoute(t, caller, route);
  return { ...route, deployedAt };
}

/** The recipient's balance of the route's mint: lamports on a native route, else tokens. */
const received = (t: TestApp, route: QuotedRoute) =>
  route.mint === SOL_MINT ? lamports(t, route.recipient) : tokenBalance(t, route.recipient, route.mint);

/**
 * A verified route: the screening gives the source exactly its deposit back on chain, then every
 * hop runs on its due time and the recipient gets the net amount.
 */
async function expectVerifiedAndCompleted(
  t: TestApp,
  caller: Caller,
  keeper: ReturnType<typeof keeperWorker>,
  route: Awaited<ReturnType<typeof deployed>>,
  deposit: bigint,
) {
  const before = await routeOnChain(t, route.id);
  assert.deepEqual([before.route.screening, before.route.depositLamports], ['pending', deposit]);
  const sourceBefore = await lamports(t, route.source.address);
  const recipientBefore = await received(t, route);

  assert.equal(await keeper.runOnce(), 1, 'the route is screened at once');
  const screened = await routeOnChain(t, route.id);
  assert.deepEqual([screened.route.screening, screened.route.depositLamports], ['verified', 0n]);
  assert.equal(await lamports(t, route.source.address), sourceBefore + deposit, 'the deposit is refunded');
  assert.equal(screened.lamports, before.lamports - deposit);
  assert.equal(screened.route.nextStep, 0, 'no hop before it is due');
  assert.equal(await keeper.runOnce(), 0);

  for (let hop = 1; hop <= HOPS; hop++) {
    await travelTo(t, route.deployedAt + BigInt(hop) * INTERVAL);
    assert.equal(await keeper.runOnce(), 1, `hop ${hop} runs when due`);
  }
  const done = await transferOf(caller, route.id);
  assert.deepEqual([done.status, done.phase, done.progress.hopsCompleted], ['completed', 'settled', HOPS]);
  assert.equal(done.lastError, null);
  assert.equal((await received(t, route)) - recipientBefore, BigInt(route.estimate.tokens.netDeliveredRaw));
  assert.deepEqual((await eventTypes(t, route.id)).slice(DEPLOYED_EVENTS.length), [
    'transfer.hop_complete',
    'transfer.hop_complete',
    'transfer.hop_complete',
    'transfer.completed',
    'transfer.phase_changed',
  ]);
}

/**
 * A flagged route: the deposit goes to the platform's account fixed in the route (the protocol
 * config, which holds the platform's earnings), exactly, and the source gets none of it; the
 * transfer is `failed`/`recoverable` with why and what the source can rescue; and no hop ever
 * runs, however late it gets.
 */
async function expectFlagged(
  t: TestApp,
  caller: Caller,
  keeper: ReturnType<typeof keeperWorker>,
  route: Awaited<ReturnType<typeof deployed>>,
  deposit: bigint,
) {
  const before = await routeOnChain(t, route.id);
  const platformWallet = before.route.platformWallet;
  assert.equal(platformWallet, t.platform.configAddress);
  const [platformBefore, sourceBefore] = [
    await lamports(t, platformWallet),
    await lamports(t, route.source.address),
  ];

  assert.equal(await keeper.runOnce(), 1);
  const flagged = await routeOnChain(t, route.id);
  assert.deepEqual(
    [flagged.route.status, flagged.route.screening, flagged.route.depositLamports],
    ['flagged', 'flagged', 0n],
  );
  assert.equal(await lamports(t, platformWallet), platformBefore + deposit, 'the deposit is forfeited');
  assert.equal(await lamports(t, route.source.address), sourceBefore);
  assert.equal(flagged.lamports, before.lamports - deposit);

  const transfer = await transferOf(caller, route.id);
  assert.deepEqual([transfer.status, transfer.phase], ['failed', 'recoverable']);
  assert.equal(transfer.lastError.code, 'MH_031');
  assert.match(transfer.lastError.message, /screening flagged this route/i);
  assert.deepEqual((await eventTypes(t, route.id)).slice(DEPLOYED_EVENTS.length).sort(), [
    'transfer.failed',
    'transfer.phase_changed',
    'transfer.recoverable',
  ]);
  const rescuable = await rescuableOnChain(t, route.id);
  assert.equal(transfer.recovery.canRescue, true);
  assert.equal(transfer.recovery.rescuableLamports, rescuable.lamports);
  assert.deepEqual(sortAccounts(transfer.recovery.rescuableAccounts), rescuable.accounts);

  // Past every due time, nothing runs: no hop on chain, nothing for the recipient.
  await travelTo(t, route.deployedAt + BigInt(HOPS) * INTERVAL + 60n);
  assert.equal(await keeper.runOnce(), 0);
  const later = await routeOnChain(t, route.id);
  assert.equal(later.route.nextStep, 0);
  assert.ok(later.steps.every((step) => step.status === 'pending'));
  assert.equal(await received(t, route), 0n);
  assert.equal((await t.chain.chain.getTokenAccount(later.route.custody))?.amount, route.amountRaw);
  assert.deepEqual((await transferOf(caller, route.id)).signatures.hops, []);
}

describe('screening with the deny-list provider', () => {
  let t: TestApp;
  let deposit: bigint;
  let caller: Caller;
  let usdc: Address;
  let keeper: ReturnType<typeof keeperWorker>;
  let deniedSource: KeyPairSigner;
  let deniedRecipient: KeyPairSigner;
  let provider: ScreeningProvider;
  before(async () => {
    [deniedSource, deniedRecipient] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
    provider = createListScreening([deniedSource.address, deniedRecipient.address]);
    ({ t, deposit } = await screeningApp(provider));
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
    keeper = keeperWorker(t, { screening: provider });
  });
  after(() => t.close());

  for (const native of [false, true]) {
    test(`verified (${native ? 'native SOL' : 'SPL token'}): the deposit is refunded to the source, the hops run to completed`, async () => {
      const route = await deployed(t, caller, { mint: native ? (SOL_MINT as Address) : usdc });
      await expectVerifiedAndCompleted(t, caller, keeper, route, deposit);
    });
  }

  test('a listed source: the deposit is forfeited, the route never executes, recoverable', async () => {
    await expectFlagged(
      t,
      caller,
      keeper,
      await deployed(t, caller, { mint: usdc, source: deniedSource }),
      deposit,
    );
  });

  test('a listed recipient (native SOL): the same', async () => {
    const route = await deployed(t, caller, {
      mint: SOL_MINT as Address,
      recipient: deniedRecipient.address,
    });
    await expectFlagged(t, caller, keeper, route, deposit);
  });

  test('a flagged verdict its worker failed to record is recorded from the chain in a later round', async () => {
    const route = await deployed(t, caller, { mint: usdc, source: deniedSource });
    const platformBefore = await lamports(t, t.platform.configAddress);
    const failing = keeperWorker(t, {
      screening: provider,
      transfers: {
        markRecoverable: async () => {
          throw new Error('the database connection was lost');
        },
      },
    });
    assert.equal(await failing.runOnce(), 1);
    assert.equal((await routeOnChain(t, route.id)).route.status, 'flagged');
    assert.equal((await transferOf(caller, route.id)).status, 'processing');

    t.clock.advance(2_000);
    assert.equal(await keeper.runOnce(), 1);
    const transfer = await transferOf(caller, route.id);
    assert.deepEqual([transfer.status, transfer.phase], ['failed', 'recoverable']);
    assert.match(transfer.lastError.message, /screening flagged this route/i);
    assert.equal(transfer.recovery.rescuableLamports, (await rescuableOnChain(t, route.id)).lamports);
    assert.equal(await lamports(t, t.platform.configAddress), platformBefore + deposit, 'forfeited once');
    assert.deepEqual((await eventTypes(t, route.id)).slice(DEPLOYED_EVENTS.length).sort(), [
      'transfer.failed',
      'transfer.phase_changed',
      'transfer.recoverable',
    ]);
    t.clock.advance(3_600_000);
    assert.equal(await keeper.runOnce(), 0);
  });
});

describe('screening through the screening API', () => {
  const API_KEY = 'screening-api-key';
  let api: ScreeningApi;
  let t: TestApp;
  let deposit: bigint;
  let caller: Caller;
  let usdc: Address;
  let keeper: ReturnType<typeof keeperWorker>;
  before(async () => {
    api = await startScreeningApi(API_KEY);
    // A short timeout: a hanging API costs the test this much real time per round.
    const provider = createHttpScreening({ baseUrl: api.url, apiKey: API_KEY, timeoutMs: 150 });
    ({ t, deposit } = await screeningApp(provider));
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
    keeper = keeperWorker(t, { screening: provider });
  });
  after(async () => {
    await t.close();
    await api.close();
  });

  test('clear: both addresses are asked for with the key, the deposit is refunded, completed', async () => {
    api.mode = 'answer';
    const route = await deployed(t, caller, { mint: usdc });
    api.requests.length = 0;
    await expectVerifiedAndCompleted(t, caller, keeper, route, deposit);
    assert.deepEqual(
      api.requests.map((request) => request.path).sort(),
      [`/api/v1/address/${route.source.address}`, `/api/v1/address/${route.recipient}`].sort(),
    );
    assert.ok(api.requests.every((request) => request.apiKey === API_KEY));
  });

  test('an identification of the recipient: forfeited, never executes, recoverable', async () => {
    api.mode = 'answer';
    const recipient = (await generateKeyPairSigner()).address;
    api.flagged.add(recipient);
    await expectFlagged(t, caller, keeper, await deployed(t, caller, { mint: usdc, recipient }), deposit);
  });

  test('an API down until after the route’s deadline: no verdict, the deposit stays in the route, recoverable', async () => {
    api.mode = 'answer';
    const route = await deployed(t, caller, { mint: usdc });
    api.mode = 'error';
    assert.equal(await keeper.runOnce(), 1);
    const { route: waiting, lamports: routeLamports } = await routeOnChain(t, route.id);

    await travelTo(t, waiting.deadlineAt + 1n);
    t.clock.advance(2_000);
    const asked = api.requests.length;
    assert.equal(await keeper.runOnce(), 1);
    assert.equal(api.requests.length, asked, 'no point asking for a verdict now');
    const past = await routeOnChain(t, route.id);
    assert.deepEqual(
      [past.route.status, past.route.screening, past.route.depositLamports, past.lamports],
      ['active', 'pending', deposit, routeLamports],
    );
    const transfer = await transferOf(caller, route.id);
    assert.deepEqual([transfer.status, transfer.phase], ['failed', 'recoverable']);
    assert.match(transfer.lastError.message, /passed its deadline before hop 1 of 3/);
    const rescuable = await rescuableOnChain(t, route.id);
    assert.equal(transfer.recovery.canRescue, true);
    assert.equal(transfer.recovery.rescuableLamports, rescuable.lamports);
    assert.deepEqual(sortAccounts(transfer.recovery.rescuableAccounts), rescuable.accounts);
    assert.deepEqual((await eventTypes(t, route.id)).slice(DEPLOYED_EVENTS.length).sort(), [
      'transfer.failed',
      'transfer.phase_changed',
      'transfer.recoverable',
    ]);
    api.mode = 'answer';
    t.clock.advance(600_000);
    assert.equal(await keeper.runOnce(), 0);
  });

  const outages: ScreeningApiMode[] = ['error', 'hang', 'not_json', 'no_identifications'];
  for (const mode of outages) {
    test(`an API that answers ${mode}: the route waits unscreened, asked again with backoff, then screened and completed`, async () => {
      api.mode = 'answer';
      const route = await deployed(t, caller, { mint: usdc });
      const sourceBefore = await lamports(t, route.source.address);
      api.mode = mode;
      const retried = await keeper.hops('retried');

      // Backoff after the n-th failure is between half and all of 2 s × 2^(n-1).
      for (let failure = 1; failure <= 3; failure++) {
        const backoff = 2_000 * 2 ** (failure - 1);
        assert.equal(await keeper.runOnce(), 1, `screening attempt ${failure}`);
        assert.equal(await keeper.hops('retried'), retried + failure);
        assert.equal(await keeper.runOnce(), 0, 'not asked again at once');
        t.clock.advance(backoff / 2 - 1);
        assert.equal(await keeper.runOnce(), 0, 'not before the backoff');
        t.clock.advance(backoff / 2 + 1);
      }
      const waiting = await routeOnChain(t, route.id);
      assert.deepEqual([waiting.route.screening, waiting.route.depositLamports], ['pending', deposit]);
      assert.equal(await lamports(t, route.source.address), sourceBefore);
      const transfer = await transferOf(caller, route.id);
      assert.deepEqual(
        [transfer.status, transfer.phase, transfer.progress.hopsCompleted],
        ['processing', 'executing', 0],
      );
      const logged = keeper.logs.filter((line) => line.msg === 'hop retried' && line.transferId === route.id);
      assert.equal(logged.length, 3);
      assert.ok(logged.every((line) => line.reason === 'screening unavailable'));

      // Past the first due time, still unscreened: the hop is never tried.
      await travelTo(t, route.deployedAt + INTERVAL + 1n);
      assert.equal(await keeper.runOnce(), 1);
      assert.equal((await routeOnChain(t, route.id)).route.nextStep, 0);
      assert.equal((await routeOnChain(t, route.id)).route.screening, 'pending');

      // The API is back: the next round after the backoff screens the route, refunds the deposit,
      // and the overdue first hop runs in the round after.
      api.mode = 'answer';
      assert.equal(await keeper.runOnce(), 0);
      t.clock.advance(16_000);
      assert.equal(await keeper.runOnce(), 1);
      assert.equal((await routeOnChain(t, route.id)).route.screening, 'verified');
      assert.equal(await lamports(t, route.source.address), sourceBefore + deposit);
      const { rows } = await t.database.db.query<{ hop_attempts: number }>(
        'SELECT hop_attempts FROM transfers WHERE id = $1',
        [route.id],
      );
      assert.equal(rows[0]?.hop_attempts, 0, 'the hops start with no backoff left from the outage');
      assert.equal(await keeper.runOnce(), 1);
      assert.equal((await transferOf(caller, route.id)).progress.hopsCompleted, 1);
      for (let hop = 2; hop <= HOPS; hop++) {
        await travelTo(t, route.deployedAt + BigInt(hop) * INTERVAL);
        assert.equal(await keeper.runOnce(), 1);
      }
      const done = await transferOf(caller, route.id);
      assert.deepEqual([done.status, done.phase], ['completed', 'settled']);
      assert.equal(
        await tokenBalance(t, route.recipient, usdc),
        BigInt(route.estimate.tokens.netDeliveredRaw),
      );
    });
  }
});
