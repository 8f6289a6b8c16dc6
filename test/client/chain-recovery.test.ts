// The client's exit from the chain alone: with the service's API and workers stopped (only the
// chain's RPC endpoint answers), a source wallet rescues a failed route and an overdue one, and
// reclaims a completed route's rent, with the client and its own signature; balances checked to
// the lamport and the token base unit. The keeper's leftover stays behind, as documented.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, address, generateKeyPairSigner, type Signature } from '@solana/kit';
import { COMPUTE_BUDGET_PROGRAM_ADDRESS } from '@solana-program/compute-budget';
import {
  findAssociatedTokenPda,
  getCloseAccountInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { withMargin } from '@transfer-router/landing';
import { FALLBACK_UNITS } from '../../clients/typescript/src/chain-recovery-plan.ts';
import {
  type ChainRecoveryOptions,
  type ChainRecoveryResult,
  isChainRecoveryError,
  reclaimRent,
  reclaimRentFromChain,
  rescue,
  rescueFromChain,
  signAndBroadcastBundle,
  type TransferRouterClient,
} from '../../clients/typescript/src/index.ts';
import { decodeRoute } from '../../src/chain/router/accounts.ts';
import { COMPUTE_UNIT_LIMITS } from '../../src/chain/router/footprint.ts';
import { findRouteAddresses } from '../../src/chain/router/pda.ts';
import { sendAndConfirm } from '../../src/platform/send.ts';
import { type Caller, createTestApp, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { failLastHop, feesPaidBy, lamports, routeRow, travelPast } from '../recovery/helpers.ts';
import {
  clientFor,
  computeBudgetOf,
  holding,
  kitRpc,
  listen,
  quoteWithClient,
  runHops,
  scriptedRpc,
  sentSignature,
  stopService,
} from './helpers.ts';

const ARRIVAL_SECONDS = 60;
const SOL = address(SOL_MINT);
const HOPS = 3;

test('where a recovery cannot be simulated, the client’s compute-unit limits are the service’s, sized for the legacy SPL Token program', () => {
  assert.equal(FALLBACK_UNITS.recovery, COMPUTE_UNIT_LIMITS.recovery);
  assert.equal(FALLBACK_UNITS.openTokenAccount, COMPUTE_UNIT_LIMITS.createTokenAccount);
});

describe('rescueFromChain and reclaimRentFromChain: the source’s exit with the service stopped', () => {
  let t: TestApp;
  let caller: Caller;
  let client: TransferRouterClient;
  let usdc: Address;
  type Quoted = Awaited<ReturnType<typeof quoteWithClient>>;
  /** A route on USDC whose keeper marked it failed; its source closed its empty token account meanwhile. */
  let failed: Quoted;
  /** A native-SOL route whose keeper never ran. */
  let overdue: Quoted;
  /** A native-SOL route that settled. */
  let completed: Quoted;

  const chainNow = async () => (await t.chain.chain.getClock()).unixTimestamp;
  const quote = (mint: Address) =>
    quoteWithClient(t, client, { mint, hops: HOPS, arrivalSeconds: ARRIVAL_SECONDS });
  /** Deploys a quoted route with the client, as the source's wallet does; answers the chain's time before. */
  async function deploy(route: Quoted) {
    const deployedAt = await chainNow();
    await signAndBroadcastBundle(client, { transferId: route.id, signer: route.source, ...kitRpc(t) });
    return deployedAt;
  }

  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', { rateLimitMultiplier: 100 });
    client = clientFor(await listen(t), caller);
    usdc = await createMint(t.chain, { decimals: 6 });

    // The keeper runs while the service is up: these two routes end as they would.
    completed = await quote(SOL);
    const deployedAt = await deploy(completed);
    await runHops(t, { id: completed.id, hops: HOPS, arrivalSeconds: ARRIVAL_SECONDS, deployedAt });
    failed = await quote(usdc);
    await deploy(failed);
    // Its tokens are all in the route: the wallet closes its empty account to get the rent back.
    const [sourceToken] = await findAssociatedTokenPda({
      owner: failed.source.address,
      mint: usdc,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    await sendAndConfirm(t.chain.chain, failed.source, [
      getCloseAccountInstruction({
        account: sourceToken,
        destination: failed.source.address,
        owner: failed.source,
      }),
    ]);
    await failLastHop(t, failed);

    // Taken over by the service, whose keeper never runs again.
    overdue = await quote(SOL);
    await deploy(overdue);
    await stopService(t);
  });
  after(() => t.close());

  /** The options of a recovery of `route` by its source, through the chain's endpoint only. */
  const from = (route: Quoted): ChainRecoveryOptions => ({
    signer: route.source,
    ...kitRpc(t),
    programAddress: t.platform.programAddress,
    route: { source: route.source.address, transferId: route.id },
  });

  /**
   * A route as the chain holds it: its address and keeper, and the lamports of every account of
   * it (route, custody, intermediate accounts, step states, and the source's orchestrator config,
   * which closes with the source's only route).
   */
  async function onChain(route: Quoted) {
    const addresses = await findRouteAddresses(
      { source: route.source.address, routeId: BigInt(route.id), hopCount: HOPS },
      t.platform.programAddress,
    );
    const account = await t.chain.chain.getAccount(addresses.route[0]);
    assert.ok(account, 'the route exists');
    const data = decodeRoute(account.data);
    const accounts = [
      addresses.route[0],
      addresses.custody[0],
      ...data.hops,
      ...addresses.steps.map(([step]) => step),
      addresses.orchestrator[0],
    ];
    const balances = await Promise.all(accounts.map((address) => lamports(t, address)));
    return {
      address: addresses.route[0],
      orchestrator: addresses.orchestrator[0],
      data,
      accounts,
      held: balances.reduce((sum, balance) => sum + balance, 0n),
    };
  }

  /** Runs a recovery; answers its result and the source's lamports, tokens and network fees before and after. */
  async function measured<T>(route: Quoted, recover: () => Promise<T>) {
    const source = route.source.address;
    const read = async () => ({
      lamports: await lamports(t, source),
      tokens: route.mint === SOL_MINT ? 0n : await holding(t, source, route.mint),
      fees: await feesPaidBy(t, source),
    });
    const before = await read();
    const result = await recover();
    const after = await read();
    return {
      result,
      lamports: after.lamports - before.lamports,
      tokens: after.tokens - before.tokens,
      fees: after.fees - before.fees,
    };
  }

  /**
   * Asserts that each transaction of a recovery starts with its compute budget, its limit what
   * simulating it used plus the margin: no fixed figure.
   */
  async function assertBudgetFirst(result: ChainRecoveryResult) {
    for (const { signature } of result.transactions) {
      const { programs, units, used } = await computeBudgetOf(t, signature);
      assert.deepEqual(programs.slice(0, 2), [
        COMPUTE_BUDGET_PROGRAM_ADDRESS,
        COMPUTE_BUDGET_PROGRAM_ADDRESS,
      ]);
      assert.ok(units !== null && units >= used, `limit ${units} covers the ${used} units used`);
      assert.ok(
        units <= withMargin(used) + 500,
        `limit ${units} is what ${used} units need, with the margin`,
      );
    }
  }

  /** Asserts that every account of the route is closed and the keeper kept its balance. */
  async function assertClosedButKeeper(route: Awaited<ReturnType<typeof onChain>>, keeperLamports: bigint) {
    for (const account of route.accounts)
      assert.equal(await t.chain.chain.getAccount(account), null, account);
    assert.ok(keeperLamports > 0n, 'the keeper had lamports left');
    assert.equal(await lamports(t, route.data.keeper), keeperLamports, 'the keeper’s leftover stays behind');
  }

  test('the service is stopped: its API answers nothing', async () => {
    await assert.rejects(client.getTransfer(failed.id), TypeError);
  });

  test('a failed route comes back from the chain alone: every token, every lamport of its accounts less network fees; the keeper’s leftover stays', async () => {
    const route = await onChain(failed);
    assert.equal(route.data.status, 'failed');
    const keeperLamports = await lamports(t, route.data.keeper);
    // Reclaim is for routes that ended, and only the source may recover.
    await assert.rejects(reclaimRentFromChain(from(failed)), (error: unknown) =>
      isChainRecoveryError(error, 'not_ended'),
    );
    const stranger = await generateKeyPairSigner();
    await assert.rejects(rescueFromChain({ ...from(failed), signer: stranger }), (error: unknown) =>
      isChainRecoveryError(error, 'not_source'),
    );

    const sourceTokenRent = BigInt(await t.chain.chain.getMinimumBalanceForRentExemption(165));
    // The node drops the first send of the rescue: the wallet's bytes are sent again as they are.
    const sent: { signature: Signature; bytes: string }[] = [];
    const { rpc } = scriptedRpc(t, async (request, forward) => {
      if (request.method !== 'sendTransaction') return forward();
      sent.push({ signature: sentSignature(request), bytes: String(request.params[0]) });
      return sent.length === 1 ? { jsonrpc: '2.0', id: request.id, result: sent[0]!.signature } : forward();
    });
    const { result, ...delta } = await measured(failed, () => rescueFromChain({ ...from(failed), rpc }));
    assert.ok(sent.length >= 2, 'sent again');
    assert.deepEqual(new Set(sent.map((entry) => entry.bytes)), new Set([sent[0]!.bytes]), 'the same bytes');
    assert.equal(result.transactions[0]?.signature, sent[0]!.signature);
    assert.equal(result.route, route.address);
    assert.equal(result.status, 'failed');
    assert.equal(delta.tokens, BigInt(failed.created.amountRaw));
    assert.equal(result.tokens, delta.tokens, 'the whole amount, into the reopened token account');
    assert.equal(delta.fees, result.fees);
    assert.equal(
      delta.lamports,
      route.held - sourceTokenRent - delta.fees,
      'what the route’s accounts held, less the reopened token account’s rent and network fees',
    );
    assert.equal(result.lamports, route.held - sourceTokenRent);
    assert.deepEqual(result.keeper, { address: route.data.keeper, lamports: keeperLamports });
    assert.equal(result.transactions.length, 1);
    const [transaction] = result.transactions;
    assert.equal(transaction?.recovery?.tokens, delta.tokens, 'the program’s return data');
    assert.equal(transaction.recovery.routeClosed, true);
    assert.equal(transaction.recovery.orchestratorClosed, true);
    await assertBudgetFirst(result);
    await assertClosedButKeeper(route, keeperLamports);

    const again = await rescueFromChain(from(failed));
    assert.deepEqual(again, {
      route: route.address,
      status: 'closed',
      transactions: [],
      tokens: 0n,
      lamports: 0n,
      fees: 0n,
      keeper: null,
    });
  });

  test('an active native-SOL route is refused until its deadline, then comes back unwrapped', async () => {
    const route = await onChain(overdue);
    assert.equal(route.data.status, 'active');
    await assert.rejects(rescueFromChain({ ...from(overdue), route: route.address }), (error: unknown) => {
      assert.ok(isChainRecoveryError(error, 'before_deadline'));
      assert.equal(error.deadlineAt, route.data.deadlineAt);
      assert.ok(error.chainTime! <= route.data.deadlineAt);
      assert.match(error.message, new RegExp(new Date(Number(route.data.deadlineAt) * 1000).toISOString()));
      return true;
    });

    await travelPast(t, route.data.deadlineAt + 1n);
    const keeperLamports = await lamports(t, route.data.keeper);
    const { result, ...delta } = await measured(overdue, () => rescueFromChain(from(overdue)));
    assert.equal(result.status, 'active');
    assert.equal(result.tokens, BigInt(overdue.created.amountRaw), 'the whole amount');
    assert.equal(delta.fees, result.fees);
    assert.equal(delta.lamports, route.held - delta.fees, 'everything the route’s accounts held, as SOL');
    assert.equal(result.lamports, route.held);
    assert.equal(
      result.transactions[0]?.recovery,
      null,
      'the unwrap after the rescue replaces its return data',
    );
    assert.deepEqual(result.keeper, { address: route.data.keeper, lamports: keeperLamports });
    await assertBudgetFirst(result);
    await assertClosedButKeeper(route, keeperLamports);

    const again = await rescueFromChain(from(overdue));
    assert.equal(again.status, 'closed');
    assert.deepEqual(again.transactions, []);
  });

  test('a completed route’s rent comes back from the chain alone; a rescue of it is refused; a second run finds nothing left', async () => {
    const route = await onChain(completed);
    assert.equal(route.data.status, 'settled');
    await assert.rejects(rescueFromChain(from(completed)), (error: unknown) =>
      isChainRecoveryError(error, 'settled'),
    );
    const keeperLamports = await lamports(t, route.data.keeper);
    const { result, ...delta } = await measured(completed, () => reclaimRentFromChain(from(completed)));
    assert.equal(result.status, 'settled');
    assert.equal(result.tokens, 0n);
    assert.equal(delta.fees, result.fees);
    assert.equal(delta.lamports, route.held - delta.fees, 'every lamport of rent, less network fees');
    assert.equal(result.lamports, route.held);
    const [transaction] = result.transactions;
    assert.equal(transaction?.recovery?.routeClosed, true);
    assert.equal(
      transaction.recovery.routeLamports +
        transaction.recovery.stepLamports +
        transaction.recovery.tokenAccountLamports +
        transaction.recovery.orchestratorLamports,
      route.held,
      'the program’s return data accounts for every lamport',
    );
    assert.deepEqual(result.keeper, { address: route.data.keeper, lamports: keeperLamports });
    await assertBudgetFirst(result);
    await assertClosedButKeeper(route, keeperLamports);

    const again = await reclaimRentFromChain(from(completed));
    assert.equal(again.status, 'closed');
    assert.deepEqual(again.transactions, []);
  });

  test('once the service is back, it finds the routes closed and sweeps each keeper’s leftover through the API', async () => {
    // After the tests above: each route was recovered from the chain while the service was stopped.
    const back = await createTestApp({ peer: t });
    try {
      const api = clientFor(await listen(back), caller);
      for (const route of [failed, overdue, completed]) {
        const { keeper } = await routeRow(t, route.id);
        const left = await lamports(t, keeper);
        if (route !== completed) {
          const rescued = await rescue(api, { transferId: route.id, signer: route.source, ...kitRpc(t) });
          assert.deepEqual(rescued.signatures, [], 'nothing left to rescue');
          assert.equal(rescued.transfer.phase, 'rescued');
        }
        const { result, ...delta } = await measured(route, () =>
          reclaimRent(api, { transferId: route.id, signer: route.source, ...kitRpc(t) }),
        );
        assert.equal(result.signatures.length, 1);
        assert.equal(delta.lamports, left - delta.fees, 'the keeper’s leftover, less network fees');
        assert.equal(await lamports(t, keeper), 0n);
        assert.equal(result.transfer.phase, route === completed ? 'reclaimed' : 'rescued');
      }
    } finally {
      await back.close();
    }
  });
});
