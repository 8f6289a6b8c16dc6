// A claim pays exactly once: ten claims at once over two processes pay once; a process killed
// after (or before) sending its claim's transaction leaves a claim that a restarted process
// completes once; a payout that can no longer land returns its amounts.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Address, generateKeyPairSigner } from '@solana/kit';
import { pino } from 'pino';
import { generatePlatformKeys } from '../../src/platform/local-keys.ts';
import { createRewardClaimWorker } from '../../src/workers/reward-claims.ts';
import { type Caller, callerFor, createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { tokenBalance } from '../helpers/route.ts';
import { settleRoute, sharesOf } from './helpers.ts';

const EARNING = { rateLimitMultiplier: 1000, fees: { flatFeeLamportsPerHop: '1000000' } };
const ROOT = join(import.meta.dirname, '..', '..');
/** Longer than a claim's lease (30 s), shorter than a blockhash's life (150 slots of 400 ms). */
const PAST_LEASE_MS = 31_000;

describe('a claim pays exactly once', () => {
  const keys = generatePlatformKeys();
  let t: TestApp;
  let usdc: Address;
  before(async () => {
    t = await createTestApp({ platform: { keys } });
    usdc = await createMint(t.chain, { decimals: 6 });
  });
  after(() => t.close());

  const lamports = async (address: Address) => BigInt(await t.chain.chain.getBalance(address));
  const worker = () =>
    createRewardClaimWorker({
      db: t.database.db,
      rewards: t.store.rewards,
      chain: t.chain.chain,
      platform: t.platform,
      clock: t.clock,
      pollMs: 20,
      log: pino({ level: 'silent' }),
    });

  /** An integration that earned two USDC transfers' shares (1,800,000 lamports), with a wallet holding a USDC account. */
  async function earner() {
    const caller = await t.newCaller('test', EARNING);
    const shares = sharesOf([await settleRoute(t, caller, usdc), await settleRoute(t, caller, usdc)]);
    const wallet = (await generateKeyPairSigner()).address;
    await t.chain.cheats.setTokenAccount(wallet, usdc, { amount: 0n });
    assert.equal((await caller.post('/api/v1/rewards/wallet', { wallet })).statusCode, 200);
    return { caller, wallet, shares: { lamports: shares.lamports, usdc: shares.byMint.get(usdc)! } };
  }

  /** Runs test/rewards/claim-process.ts as a process of its own. */
  function claimProcess(mode: 'claim' | 'resume', env: Record<string, string> = {}) {
    const child = spawn(process.execPath, ['test/rewards/claim-process.ts', mode], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        DATABASE_URL: t.database.url,
        RPC_URL: t.chain.rpcUrl,
        FEE_WALLET_KEYPAIR: JSON.stringify(keys.feeWallet.toKeygenArray()),
        NOW: t.clock.now().toISOString(),
        ...env,
      },
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    return new Promise<{ signal: NodeJS.Signals | null; code: number | null; output: string }>((resolve) =>
      child.on('close', (code, signal) => resolve({ code, signal, output })),
    );
  }

  async function claimRows(caller: Caller) {
    const { rows } = await t.database.db.query<{ id: string; status: string }>(
      'SELECT id, status FROM reward_claims WHERE integration_id = $1 ORDER BY id',
      [caller.integrationId],
    );
    return rows;
  }

  test('ten concurrent claims over two processes: one pays, nine find nothing claimable (MH_060)', async () => {
    const { caller, wallet, shares } = await earner();
    const peer = await createTestApp({ peer: t });
    try {
      const key = { id: caller.keyId, key: caller.key };
      const callers = [caller, callerFor(peer.app, caller.integrationId, key)];
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, index) => callers[index % 2]!.post('/api/v1/rewards/claim', {})),
      );
      const paid = responses.filter((response) => response.statusCode === 200);
      assert.equal(paid.length, 1, responses.map((response) => response.body).join('\n'));
      assert.equal(paid[0]!.json().claim.status, 'confirmed');
      assert.deepEqual(
        responses
          .filter((response) => response.statusCode !== 200)
          .map((response) => response.json().error.code),
        Array(9).fill('MH_060'),
      );
      assert.equal(await lamports(wallet), shares.lamports);
      assert.equal(await tokenBalance(t, wallet, usdc), shares.usdc);
      assert.equal((await claimRows(caller)).length, 1);
    } finally {
      await peer.close();
    }
  });

  test('a process killed right after sending its claim: a restarted process completes the claim once; the request’s retry answers it', async () => {
    const { caller, wallet, shares } = await earner();
    const configBefore = await lamports(t.platform.configAddress);
    const feeWalletBefore = await lamports(t.platform.feeWallet);
    const killed = await claimProcess('claim', {
      INTEGRATION_ID: String(caller.integrationId),
      MODE: 'test',
      API_KEY_ID: String(caller.keyId),
      IDEMPOTENCY_KEY: 'killed-claim-0001',
      KILL: 'after-send',
    });
    assert.equal(killed.signal, 'SIGKILL', killed.output);
    // The payout landed, but the claim is still pending and leased to the dead process.
    assert.deepEqual(
      (await claimRows(caller)).map((row) => row.status),
      ['pending'],
    );
    assert.equal(await lamports(wallet), shares.lamports);
    assert.equal(
      (await claimProcess('resume')).output.trim(),
      '{"resumed":0}',
      'not before its lease lapses',
    );

    t.clock.advance(PAST_LEASE_MS);
    const restarted = await claimProcess('resume', { NOW: t.clock.now().toISOString() });
    assert.equal(restarted.code, 0, restarted.output);
    assert.equal(restarted.output.trim(), '{"resumed":1}');
    assert.deepEqual(
      (await claimRows(caller)).map((row) => row.status),
      ['confirmed'],
    );
    t.clock.advance(PAST_LEASE_MS);
    assert.equal(await worker().runOnce(), 0, 'nothing is left to resume');
    assert.equal(await lamports(wallet), shares.lamports, 'paid once');
    assert.equal(await tokenBalance(t, wallet, usdc), shares.usdc, 'paid once');
    assert.equal(configBefore - (await lamports(t.platform.configAddress)), shares.lamports, 'paid once');
    assert.equal(feeWalletBefore - (await lamports(t.platform.feeWallet)), 5_000n, 'one network fee');

    const retry = await caller.post('/api/v1/rewards/claim', {}, { 'idempotency-key': 'killed-claim-0001' });
    assert.equal(retry.statusCode, 200, retry.body);
    assert.equal(retry.json().claim.status, 'confirmed');
    assert.equal(retry.json().claim.id, Number((await claimRows(caller))[0]!.id));
    const read = (await caller.get('/api/v1/rewards')).json();
    assert.deepEqual(read.lamports, {
      accrued: Number(shares.lamports),
      claimed: Number(shares.lamports),
      claimable: 0,
    });
  });

  test('a process killed before sending: the restarted process sends the stored transaction, once', async () => {
    const { caller, wallet, shares } = await earner();
    const killed = await claimProcess('claim', {
      INTEGRATION_ID: String(caller.integrationId),
      MODE: 'test',
      API_KEY_ID: String(caller.keyId),
      IDEMPOTENCY_KEY: 'killed-claim-0002',
      KILL: 'before-send',
    });
    assert.equal(killed.signal, 'SIGKILL', killed.output);
    assert.equal(await lamports(wallet), 0n, 'nothing was sent');
    t.clock.advance(PAST_LEASE_MS);
    assert.equal(await worker().runOnce(), 1);
    assert.deepEqual(
      (await claimRows(caller)).map((row) => row.status),
      ['confirmed'],
    );
    assert.equal(await lamports(wallet), shares.lamports);
    assert.equal(await tokenBalance(t, wallet, usdc), shares.usdc);
  });

  test('a stored payout whose blockhash expired unsent fails, and its amounts are claimable again', async () => {
    const { caller, wallet, shares } = await earner();
    const killed = await claimProcess('claim', {
      INTEGRATION_ID: String(caller.integrationId),
      MODE: 'test',
      API_KEY_ID: String(caller.keyId),
      IDEMPOTENCY_KEY: 'killed-claim-0003',
      KILL: 'before-send',
    });
    assert.equal(killed.signal, 'SIGKILL', killed.output);
    const slot = await t.chain.chain.getSlot();
    await t.chain.cheats.timeTravel({ absoluteSlot: Number(slot) + 400 });
    t.clock.advance(PAST_LEASE_MS);
    assert.equal(await worker().runOnce(), 1);
    assert.deepEqual(
      (await claimRows(caller)).map((row) => row.status),
      ['failed'],
    );
    assert.equal(await lamports(wallet), 0n);
    const read = (await caller.get('/api/v1/rewards')).json();
    assert.deepEqual(read.lamports, { accrued: 1_800_000, claimed: 0, claimable: 1_800_000 });
    const paid = await caller.post('/api/v1/rewards/claim', {});
    assert.equal(paid.json().claim.status, 'confirmed', paid.body);
    assert.equal(await lamports(wallet), shares.lamports);
  });
});
