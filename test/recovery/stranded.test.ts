// Nothing stranded: lamports and tokens anyone sends to a route's accounts or its keeper, before or
// after the route ended, come back to the source with a rescue or a rent reclaim, and `recovery`
// counts them to the lamport before they do.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, generateKeyPairSigner, type Instruction, type KeyPairSigner } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import {
  getCreateAssociatedTokenIdempotentInstruction,
  getSyncNativeInstruction,
  getTransferInstruction,
} from '@solana-program/token';
import { decodeRoute } from '../../src/chain/router/accounts.ts';
import { findCustodyPda, findStepPda } from '../../src/chain/router/pda.ts';
import { sendAndConfirm } from '../../src/platform/send.ts';
import { type Caller, createTestApp, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { deployRoute, type QuotedRoute, quoteRoute } from '../helpers/route.ts';
import {
  assertMadeWhole,
  ata,
  broadcast,
  confirmReclaim,
  eventTypes,
  failLastHop,
  feesPaidBy,
  getTransfer,
  holdings,
  lamports,
  prepareRecovery,
  rescueThroughApi,
  routeRow,
  runHops,
  tokens,
  UNLIMITED,
} from './helpers.ts';

describe('nothing the source paid for stays stranded', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  let donor: KeyPairSigner;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
    // Anyone: a wallet with SOL and tokens that sends some to the route.
    donor = await generateKeyPairSigner();
    await t.chain.cheats.airdrop(donor.address, 100_000_000_000n);
    await t.chain.cheats.setTokenAccount(donor.address, usdc, { amount: 1_000_000_000n });
  });
  after(() => t.close());

  const send = (instructions: Instruction[]) =>
    sendAndConfirm(t.chain.chain, donor, instructions, { pollMs: 10 });
  const sendLamports = (to: Address, amount: bigint) =>
    send([getTransferSolInstruction({ source: donor, destination: to, amount })]);
  const sendTokens = async (to: Address, amount: bigint) =>
    send([
      getTransferInstruction({
        source: await ata(donor.address, usdc),
        destination: to,
        authority: donor,
        amount,
      }),
    ]);
  /** Wraps `amount` lamports and sends them to a wrapped-SOL account as tokens. */
  const sendWrappedSol = async (to: Address, amount: bigint) => {
    const wrapped = await ata(donor.address, SOL_MINT as Address);
    await send([
      getCreateAssociatedTokenIdempotentInstruction({
        payer: donor,
        ata: wrapped,
        owner: donor.address,
        mint: SOL_MINT as Address,
      }),
      getTransferSolInstruction({ source: donor, destination: wrapped, amount }),
      getSyncNativeInstruction({ account: wrapped }),
      getTransferInstruction({ source: wrapped, destination: to, authority: donor, amount }),
    ]);
  };

  /** The route's custody, first intermediate account, first step state and keeper. */
  async function routeAccounts(route: QuotedRoute) {
    const row = await routeRow(t, route.id);
    const onChain = decodeRoute((await t.chain.chain.getAccount(row.route))!.data);
    return {
      ...row,
      custody: (await findCustodyPda(row.route))[0],
      firstHop: onChain.hops[0]!,
      firstStep: (await findStepPda(row.route, 0))[0],
    };
  }

  const rescuable = async (route: QuotedRoute) =>
    BigInt((await getTransfer(caller, route.id)).recovery.rescuableLamports);
  const reclaimable = async (route: QuotedRoute) =>
    BigInt((await getTransfer(caller, route.id)).recovery.reclaimableLamports);

  /** Reclaims through the API and checks the source received exactly what `recovery` announced. */
  async function reclaim(route: QuotedRoute) {
    const announced = await reclaimable(route);
    const lamportsBefore = await lamports(t, route.source.address);
    const feesBefore = await feesPaidBy(t, route.source.address);
    const bundle = await prepareRecovery(caller, route.id, 'reclaim');
    assert.equal(BigInt(bundle.totalLamports), announced);
    const signatures = await broadcast(t, route.source, bundle);
    assert.deepEqual((await confirmReclaim(caller, route.id, signatures)).json(), {
      confirmed: signatures,
      failed: [],
    });
    assert.equal(
      (await lamports(t, route.source.address)) -
        lamportsBefore +
        (await feesPaidBy(t, route.source.address)) -
        feesBefore,
      announced,
    );
  }

  test('before the rescue: tokens and lamports sent to the route’s accounts and keeper come back with it', async () => {
    const route = await quoteRoute(t, caller, { hops: 3, mint: usdc, arrivalSeconds: 600 });
    const before = await holdings(t, route);
    await deployRoute(t, caller, route);
    await failLastHop(t, route);
    const accounts = await routeAccounts(route);
    const figure = await rescuable(route);
    const gifts = [
      [accounts.route, 1_001n],
      [accounts.custody, 2_002n],
      [accounts.firstHop, 3_003n],
      [accounts.firstStep, 4_004n],
      [accounts.keeper, 5_005n],
    ] as const;
    for (const [to, amount] of gifts) await sendLamports(to, amount);
    await sendTokens(accounts.custody, 11n);
    await sendTokens(accounts.firstHop, 22n);
    const gifted = gifts.reduce((sum, [, amount]) => sum + amount, 0n);
    assert.equal(await rescuable(route), figure + gifted, 'recovery counts every lamport sent');
    await rescueThroughApi(t, caller, route);
    await assertMadeWhole(t, route, {
      ...before,
      lamports: before.lamports + gifted,
      tokens: before.tokens + 33n,
    });
  });

  test('after settlement: what is sent to the route and its keeper comes back with the reclaim; then after it', async () => {
    const route = await quoteRoute(t, caller, { hops: 3, mint: usdc, arrivalSeconds: 600 });
    await deployRoute(t, caller, route);
    await runHops(t, route.id, 3);
    const accounts = await routeAccounts(route);
    const figure = await reclaimable(route);
    await sendLamports(accounts.route, 7_007n);
    await sendLamports(accounts.keeper, 8_008n);
    await sendTokens(accounts.custody, 33n);
    assert.equal(await reclaimable(route), figure + 15_015n);
    const tokensBefore = await tokens(t, route.source.address, usdc);
    await reclaim(route);
    assert.equal(
      await tokens(t, route.source.address, usdc),
      tokensBefore + 33n,
      'the tokens sent come back',
    );
    assert.equal((await getTransfer(caller, route.id)).phase, 'reclaimed');

    // After the reclaim, lamports sent to the (emptied) keeper come back with another one.
    await sendLamports(accounts.keeper, 1_000_000n);
    const reopened = await getTransfer(caller, route.id);
    assert.equal(reopened.recovery.canReclaimRent, true);
    assert.equal(reopened.recovery.reclaimableLamports, 1_000_000);
    await reclaim(route);
    assert.equal((await getTransfer(caller, route.id)).phase, 'reclaimed');
    assert.equal(await lamports(t, accounts.keeper), 0n);
  });

  test('native SOL: wrapped SOL sent to the custody after settlement comes back as SOL', async () => {
    const route = await quoteRoute(t, caller, { hops: 3, mint: SOL_MINT as Address, arrivalSeconds: 600 });
    await deployRoute(t, caller, route);
    await runHops(t, route.id, 3);
    const accounts = await routeAccounts(route);
    const figure = await reclaimable(route);
    await sendWrappedSol(accounts.custody, 123_456n);
    assert.equal(await reclaimable(route), figure + 123_456n);
    await reclaim(route);
    assert.equal(await tokens(t, route.source.address, SOL_MINT as Address), 0n, 'nothing left wrapped');
  });

  test('after a rescue: lamports sent to the keeper come back with reclaim-rent, the transfer stays rescued', async () => {
    const route = await quoteRoute(t, caller, { hops: 3, mint: usdc, arrivalSeconds: 600 });
    await deployRoute(t, caller, route);
    await failLastHop(t, route);
    await rescueThroughApi(t, caller, route);
    const { keeper } = await routeRow(t, route.id);
    await sendLamports(keeper, 2_000_000n);
    assert.equal(await reclaimable(route), 2_000_000n);
    await reclaim(route);
    const transfer = await getTransfer(caller, route.id);
    assert.equal(transfer.phase, 'rescued');
    assert.equal(transfer.status, 'refunded');
    assert.equal((await eventTypes(t, route.id)).at(-1), 'transfer.rent_reclaimed');
    const nothing = await caller.post(`/api/v1/transfers/${route.id}/reclaim-rent/prepare`);
    assert.equal(nothing.json().error.code, 'MH_082');
  });
});
