import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type Address,
  createKeyPairSignerFromPrivateKeyBytes,
  generateKeyPairSigner,
  type KeyPairSigner,
} from '@solana/kit';
import { getMarkFailedInstruction } from '../../src/chain/router/instructions.ts';
import { sendAndConfirm } from '../../src/platform/send.ts';
import { type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { type Bundle, broadcastBundle } from '../helpers/wallet.ts';

const UNLIMITED = { rateLimitMultiplier: 1000 };

describe('abandoned deployments and the funding endpoints', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  before(async () => {
    // A short quote lifetime: deployments are abandoned 10 minutes after expiresAt.
    t = await createTestApp({ config: { quoteTtlMs: 60_000, fundingPollMs: 20 } });
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
  });
  after(() => t.close());

  async function prepared(): Promise<{ id: number; source: KeyPairSigner; bundle: Bundle }> {
    const source = await generateKeyPairSigner();
    await t.chain.cheats.airdrop(source.address, 20_000_000_000n);
    await t.chain.cheats.setTokenAccount(source.address, usdc, { amount: 500_000_000n });
    const created = await caller.post('/api/v1/transfers', {
      tokenMint: usdc,
      amountRaw: '250000000',
      amountTokens: '250',
      hops: 3,
      tokenPriceUsd: 1,
      sourceOwner: source.address,
      recipientWallet: (await generateKeyPairSigner()).address,
    });
    const { id } = created.json();
    const bundle = (await caller.post(`/api/v1/transfers/${id}/prepare`)).json().preparedTxs;
    return { id, source, bundle };
  }
  const refresh = async (id: number) => (await caller.post(`/api/v1/transfers/${id}/funding/refresh`)).json();
  const lamports = async (address: Address) => BigInt(await t.chain.chain.getBalance(address));
  const eventTypes = async (id: number) =>
    (
      await t.database.db.query<{ type: string }>(
        'SELECT type FROM events WHERE transfer_id = $1 ORDER BY sequence',
        [id],
      )
    ).rows.map((row) => row.type);

  test('a route complete on chain is taken over without a confirm call (funding/refresh)', async () => {
    const { id, source, bundle } = await prepared();
    await broadcastBundle(t.chain.chain, source, bundle);
    const { transfer } = await refresh(id);
    assert.equal(transfer.status, 'processing');
    assert.equal(transfer.phase, 'executing');
    assert.deepEqual(transfer.signatures.routeInit, [], 'the reconciler never saw the signatures');
    assert.deepEqual((await eventTypes(id)).slice(-3), [
      'transfer.deposit_confirmed',
      'transfer.processing',
      'transfer.phase_changed',
    ]);
  });

  test('funding/confirm waits for the deployment, and answers MH_032 when it does not come', async () => {
    const { id, source, bundle } = await prepared();
    const timedOut = await caller.post(`/api/v1/transfers/${id}/funding/confirm`, { timeoutSeconds: 1 });
    assert.equal(timedOut.statusCode, 408);
    assert.equal(timedOut.json().error.code, 'MH_032');

    const waiting = caller.post(`/api/v1/transfers/${id}/funding/confirm`, { timeoutSeconds: 10 });
    await broadcastBundle(t.chain.chain, source, bundle);
    const answered = await waiting;
    assert.equal(answered.statusCode, 200, answered.body);
    assert.equal(answered.json().transfer.status, 'processing');

    const invalid = await caller.post(`/api/v1/transfers/${id}/funding/confirm`, { timeoutSeconds: 61 });
    assert.equal(invalid.json().error.code, 'MH_016');
    assert.equal(invalid.json().error.param, 'timeoutSeconds');
  });

  test('abandoned with only the keeper funded: its lamports go back to the source, the transfer expires', async () => {
    const { id, source, bundle } = await prepared();
    await broadcastBundle(t.chain.chain, source, bundle, { through: 'keeperFunding' });
    const funded = await refresh(id);
    assert.equal(funded.transfer.phase, 'funding', 'a funded keeper is seen on chain');
    const keeper = (
      await t.database.db.query<{ keeper_address: Address }>(
        'SELECT keeper_address FROM transfers WHERE id = $1',
        [id],
      )
    ).rows[0]!.keeper_address;
    const keeperLamports = await lamports(keeper);
    const before = await lamports(source.address);

    t.clock.advance(60_000 + 9 * 60_000);
    assert.equal((await refresh(id)).transfer.status, 'awaiting_signature', 'still within the 10 minutes');
    t.clock.advance(60_000);
    const { transfer } = await refresh(id);
    assert.equal(transfer.status, 'expired');
    assert.equal(transfer.phase, 'expired');
    assert.equal(await lamports(keeper), 0n);
    assert.equal(
      (await lamports(source.address)) - before,
      keeperLamports - 5_000n,
      'less the keeper’s own fee',
    );
    assert.deepEqual((await eventTypes(id)).slice(-2), ['transfer.phase_changed', 'transfer.expired']);
  });

  test('abandoned half-way: recoverable, with what a rescue returns', async () => {
    const { id, source, bundle } = await prepared();
    await broadcastBundle(t.chain.chain, source, bundle, { through: 'routeInit' });
    assert.equal((await refresh(id)).transfer.phase, 'deploying');
    t.clock.advance(11 * 60_000);
    const { transfer } = await refresh(id);
    assert.equal(transfer.status, 'failed');
    assert.equal(transfer.phase, 'recoverable');
    assert.equal(transfer.lastError.code, 'MH_031');
    assert.equal(transfer.recovery.canRescue, true);
    const kinds = transfer.recovery.rescuableAccounts.map((account: { kind: string }) => account.kind).sort();
    assert.deepEqual(kinds, ['ata', 'ata', 'ata', 'keeper', 'route_pda']);
    assert.equal(
      transfer.recovery.rescuableLamports,
      transfer.recovery.rescuableAccounts.reduce(
        (sum: number, account: { lamports: number }) => sum + account.lamports,
        0,
      ),
    );
    assert.deepEqual((await eventTypes(id)).slice(-3), [
      'transfer.phase_changed',
      'transfer.failed',
      'transfer.recoverable',
    ]);
    // Its quote expired: prepare has nothing to offer but MH_034, like any expired transfer.
    const again = await caller.post(`/api/v1/transfers/${id}/prepare`);
    assert.equal(again.statusCode, 410, again.body);
    assert.equal(again.json().error.code, 'MH_034');
  });

  test('funding/refresh reads any phase from the chain: a route past its deadline, or marked failed, with no worker running', async () => {
    const overdue = await prepared();
    const failed = await prepared();
    for (const route of [overdue, failed]) {
      await broadcastBundle(t.chain.chain, route.source, route.bundle);
      assert.equal((await refresh(route.id)).transfer.phase, 'executing');
    }
    // The keeper marks one failed on chain and dies before recording it.
    const { route_address: routeAddress } = (
      await t.database.db.query<{ route_address: Address }>(
        'SELECT route_address FROM transfers WHERE id = $1',
        [failed.id],
      )
    ).rows[0]!;
    const keeper = await createKeyPairSignerFromPrivateKeyBytes(
      (await t.store.deployments.keeperPrivateKey(failed.id))!,
    );
    await sendAndConfirm(
      t.chain.chain,
      keeper,
      [getMarkFailedInstruction({ keeper, route: routeAddress }, t.platform.programAddress)],
      { pollMs: 5 },
    );
    const marked = (await refresh(failed.id)).transfer;
    assert.deepEqual([marked.status, marked.phase, marked.lastError.code], ['failed', 'failed', 'MH_031']);
    assert.equal(marked.recovery.canRescue, true);

    const { deadline_at: deadline } = (
      await t.database.db.query<{ deadline_at: string }>('SELECT deadline_at FROM transfers WHERE id = $1', [
        overdue.id,
      ])
    ).rows[0]!;
    await t.chain.cheats.timeTravel({ absoluteTimestamp: (Number(deadline) + 1) * 1000 });
    const late = (await refresh(overdue.id)).transfer;
    assert.deepEqual([late.status, late.phase], ['failed', 'recoverable']);
    assert.match(late.lastError.message, /passed its deadline/);
    assert.deepEqual((await eventTypes(overdue.id)).slice(-3), [
      'transfer.phase_changed',
      'transfer.failed',
      'transfer.recoverable',
    ]);
    // A taken-over transfer's prepare answers nothing to do, expired quote or not.
    const prepareAgain = await caller.post(`/api/v1/transfers/${overdue.id}/prepare`);
    assert.equal(prepareAgain.statusCode, 200, prepareAgain.body);
    assert.equal(prepareAgain.json().preparedTxs.resume.nothingToDo, true);
  });

  test('the reconciler does the same without any call', async () => {
    const { id, source, bundle } = await prepared();
    await broadcastBundle(t.chain.chain, source, bundle);
    await t.reconciler.runOnce();
    assert.equal((await caller.get(`/api/v1/transfers/${id}`)).json().status, 'processing');
  });
});
