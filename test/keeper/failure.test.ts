// A hop that can never succeed: the keeper marks the route failed on chain (the source can rescue
// at once), records phase `failed` with why and what the source can rescue, and tries nothing more.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, generateKeyPairSigner, type KeyPairSigner } from '@solana/kit';
import {
  findAssociatedTokenPda,
  getCloseAccountInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { sendAndConfirm } from '../../src/platform/send.ts';
import { type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { deployRoute, quoteRoute, tokenBalance } from '../helpers/route.ts';
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

const HOPS = 3;
const ARRIVAL = 600;
const INTERVAL = BigInt(ARRIVAL / HOPS);

describe('a hop that fails permanently', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  let keeper: ReturnType<typeof keeperWorker>;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
    keeper = keeperWorker(t);
  });
  after(() => t.close());

  /** The recipient's wallet closes its (empty) token account of `mint`, as any wallet may. */
  async function closeTokenAccount(recipient: KeyPairSigner, mint: Address) {
    const [account] = await findAssociatedTokenPda({
      owner: recipient.address,
      mint,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    await t.chain.cheats.airdrop(recipient.address, 1_000_000_000n);
    await sendAndConfirm(
      t.chain.chain,
      recipient,
      [getCloseAccountInstruction({ account, destination: recipient.address, owner: recipient })],
      { pollMs: 5 },
    );
    assert.equal(await t.chain.chain.getAccount(account), null);
  }

  const cases: { name: string; breakRecipient(recipient: KeyPairSigner): Promise<void>; reason: RegExp }[] = [
    {
      name: 'the recipient closed its token account before the last hop',
      breakRecipient: (recipient) => closeTokenAccount(recipient, usdc),
      reason: /WrongDestination/,
    },
    {
      name: 'the recipient’s token account was frozen before the last hop',
      breakRecipient: async (recipient) => {
        await t.chain.cheats.setTokenAccount(recipient.address, usdc, { state: 'frozen' });
      },
      reason: /frozen/i,
    },
  ];
  for (const { name, breakRecipient, reason } of cases) {
    test(`${name}: marked failed on chain, phase failed with lastError, rescuable, nothing more tried`, async () => {
      const recipient = await generateKeyPairSigner();
      const route = await quoteRoute(t, caller, {
        hops: HOPS,
        mint: usdc,
        arrivalSeconds: ARRIVAL,
        recipient: recipient.address,
      });
      const deployedAt = await chainNow(t);
      await deployRoute(t, caller, route);
      const { route: onChain } = await routeOnChain(t, route.id);
      await travelTo(t, deployedAt + INTERVAL);
      assert.equal(await keeper.runOnce(), 1);
      const keeperBeforeHop = await lamports(t, onChain.keeper);
      await travelTo(t, deployedAt + 2n * INTERVAL);
      assert.equal(await keeper.runOnce(), 1);
      const keeperBefore = await lamports(t, onChain.keeper);
      const hopFee = keeperBeforeHop - keeperBefore;
      assert.equal((await transferOf(caller, route.id)).progress.hopsCompleted, 2);

      await breakRecipient(recipient);
      const failedBefore = await keeper.hops('failed');
      await travelTo(t, deployedAt + 3n * INTERVAL);
      assert.equal(await keeper.runOnce(), 1);

      // On chain: the route is failed (rescuable at once), the last step never ran, and the
      // keeper paid for one transaction only (the refused hop cost nothing: MarkFailed did).
      const failed = await routeOnChain(t, route.id);
      assert.equal(failed.route.status, 'failed');
      assert.equal(failed.route.closedAt, await chainNow(t));
      assert.equal(failed.route.nextStep, 2);
      assert.deepEqual(
        failed.steps.map((step) => step.status),
        ['executed', 'executed', 'pending'],
      );
      assert.equal(await lamports(t, onChain.keeper), keeperBefore - hopFee);
      assert.equal(await tokenBalance(t, recipient.address, usdc), 0n);

      const transfer = await transferOf(caller, route.id);
      assert.deepEqual([transfer.status, transfer.phase], ['failed', 'failed']);
      assert.equal(transfer.progress.hopsCompleted, 2);
      assert.equal(transfer.signatures.hops.length, 2);
      assert.equal(transfer.completedAt, null);
      assert.equal(transfer.lastError.code, 'MH_031');
      assert.match(transfer.lastError.message, /^Hop 3 of 3 failed permanently/);
      assert.match(transfer.lastError.message, reason);
      assert.match(transfer.lastError.message, /the source can rescue/);
      assert.deepEqual((await eventTypes(t, route.id)).slice(DEPLOYED_EVENTS.length), [
        'transfer.hop_complete',
        'transfer.hop_complete',
        'transfer.phase_changed',
        'transfer.failed',
      ]);
      const rescuable = await rescuableOnChain(t, route.id);
      assert.equal(transfer.recovery.canRescue, true);
      assert.equal(transfer.recovery.canReclaimRent, false);
      assert.equal(transfer.recovery.rescuableLamports, rescuable.lamports);
      assert.deepEqual(sortAccounts(transfer.recovery.rescuableAccounts), rescuable.accounts);
      assert.equal(await keeper.hops('failed'), failedBefore + 1);

      // Nothing more is tried, however long the keeper keeps running.
      t.clock.advance(3_600_000);
      assert.equal(await keeper.runOnce(), 0);
      assert.equal(await lamports(t, onChain.keeper), keeperBefore - hopFee);
      assert.equal((await routeOnChain(t, route.id)).route.nextStep, 2);
    });
  }

  test('a route the keeper reaches only after its deadline: recoverable as it is, nothing sent', async () => {
    const route = await quoteRoute(t, caller, { hops: HOPS, mint: usdc, arrivalSeconds: ARRIVAL });
    const deployedAt = await chainNow(t);
    await deployRoute(t, caller, route);
    await travelTo(t, deployedAt + INTERVAL);
    assert.equal(await keeper.runOnce(), 1);
    const { route: onChain } = await routeOnChain(t, route.id);
    const keeperLamports = await lamports(t, onChain.keeper);

    // The keeper network was down for longer than the grace period.
    await travelTo(t, onChain.deadlineAt + 1n);
    assert.equal(await keeper.runOnce(), 1);
    const after = await routeOnChain(t, route.id);
    assert.deepEqual([after.route.status, after.route.nextStep], ['active', 1]);
    assert.equal(await lamports(t, onChain.keeper), keeperLamports, 'nothing sent');
    assert.equal(await tokenBalance(t, route.recipient, usdc), 0n);
    const transfer = await transferOf(caller, route.id);
    assert.deepEqual([transfer.status, transfer.phase], ['failed', 'recoverable']);
    assert.match(transfer.lastError.message, /passed its deadline before hop 2 of 3/);
    const rescuable = await rescuableOnChain(t, route.id);
    assert.equal(transfer.recovery.canRescue, true);
    assert.equal(transfer.recovery.rescuableLamports, rescuable.lamports);
    assert.deepEqual(sortAccounts(transfer.recovery.rescuableAccounts), rescuable.accounts);
    assert.deepEqual((await eventTypes(t, route.id)).slice(-3).sort(), [
      'transfer.failed',
      'transfer.phase_changed',
      'transfer.recoverable',
    ]);
    assert.equal(await keeper.runOnce(), 0);
  });

  test('a failure its worker marked on chain but failed to record is recorded from the chain in a later round', async () => {
    const recipient = await generateKeyPairSigner();
    const route = await quoteRoute(t, caller, {
      hops: HOPS,
      mint: usdc,
      arrivalSeconds: ARRIVAL,
      recipient: recipient.address,
    });
    const deployedAt = await chainNow(t);
    await deployRoute(t, caller, route);
    const { route: onChain } = await routeOnChain(t, route.id);
    await closeTokenAccount(recipient, usdc);
    for (const hop of [1n, 2n]) {
      await travelTo(t, deployedAt + hop * INTERVAL);
      assert.equal(await keeper.runOnce(), 1);
    }
    await travelTo(t, deployedAt + 3n * INTERVAL);
    const failing = keeperWorker(t, {
      store: {
        ...t.store.hops,
        markFailed: async () => {
          throw new Error('the database connection was lost');
        },
      },
    });
    assert.equal(await failing.runOnce(), 1);
    assert.equal((await routeOnChain(t, route.id)).route.status, 'failed');
    assert.equal((await transferOf(caller, route.id)).status, 'processing');
    const keeperLamports = await lamports(t, onChain.keeper);

    t.clock.advance(2_000);
    assert.equal(await keeper.runOnce(), 1);
    const transfer = await transferOf(caller, route.id);
    assert.deepEqual([transfer.status, transfer.phase], ['failed', 'failed']);
    assert.match(transfer.lastError.message, /^Hop 3 of 3 failed permanently/);
    assert.match(transfer.lastError.message, /marked failed on chain/);
    assert.equal(transfer.recovery.canRescue, true);
    assert.equal(transfer.recovery.rescuableLamports, (await rescuableOnChain(t, route.id)).lamports);
    assert.equal(await lamports(t, onChain.keeper), keeperLamports, 'no second transaction');
    assert.deepEqual((await eventTypes(t, route.id)).slice(-2), [
      'transfer.phase_changed',
      'transfer.failed',
    ]);
    t.clock.advance(3_600_000);
    assert.equal(await keeper.runOnce(), 0);
  });
});
