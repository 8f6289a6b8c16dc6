// Hops that do not land the first time: a transaction the network dropped is replaced once its
// blockhash expired, never run twice; one that landed unseen is recorded from the chain; a keeper
// that cannot pay is retried with backoff.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { Address, Base64EncodedWireTransaction, Signature } from '@solana/kit';
import {
  decompileTransactionMessage,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getSignatureFromTransaction,
  getTransactionDecoder,
} from '@solana/kit';
import {
  COMPUTE_BUDGET_PROGRAM_ADDRESS,
  ComputeBudgetInstruction,
  getSetComputeUnitLimitInstructionDataDecoder,
  identifyComputeBudgetInstruction,
} from '@solana-program/compute-budget';
import { withMargin } from '@transfer-router/landing';
import { isChainError } from '../../src/chain/errors.ts';
import { COMPUTE_UNIT_LIMITS } from '../../src/chain/router/footprint.ts';
import type { Chain, WireTransactionInput } from '../../src/chain/types.ts';
import { type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { otherWorkerProcess } from '../helpers/database.ts';
import { quoteRoute } from '../helpers/route.ts';
import { UNLIMITED } from '../route/helpers.ts';
import {
  allCompleted,
  deployDueRoutes,
  deployWithFirstHopDue,
  keeperWorker,
  lamports,
  routeOnChain,
  transferOf,
  travelTo,
} from './helpers.ts';
import { waitUntil } from './worker-process.ts';

const HOPS = 3;
const ARRIVAL = 600;
const INTERVAL = BigInt(ARRIVAL / HOPS);
/** More than a blockhash lives (150 slots of 400 ms). */
const BLOCKHASH_LIFETIME_MS = 61_000;

/** The signature of a wire transaction. */
const signatureOf = (wire: WireTransactionInput) =>
  getSignatureFromTransaction(
    getTransactionDecoder().decode(typeof wire === 'string' ? getBase64Encoder().encode(wire) : wire),
  );

/** A promise and the function that resolves it. */
function signal<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

describe('hops that do not land the first time', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  // A chain and database of its own for each test: no other route falls due in its rounds.
  beforeEach(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
  });
  afterEach(() => t.close());

  /** A deployed 3-hop route whose first hop is due now. */
  async function dueRoute() {
    const route = await quoteRoute(t, caller, { hops: HOPS, mint: usdc, arrivalSeconds: ARRIVAL });
    return { ...route, ...(await deployWithFirstHopDue(t, caller, route, INTERVAL)) };
  }

  /**
   * A chain whose node holds its answer to the first hop's send until `landed` resolves (the hop
   * lands at once; its worker waits for the answer); `sent` lists every hop sent.
   */
  function slowFirstHop() {
    const sent: Signature[] = [];
    const landed = signal<void>();
    const chain: Chain = {
      ...t.chain.chain,
      async sendTransaction(wire, options) {
        const signature = await t.chain.chain.sendTransaction(wire, options);
        sent.push(signature);
        if (signature === sent[0]) await landed.promise;
        return signature;
      },
    };
    return { chain, sent, landed };
  }

  /** The first hop ran exactly once on chain, recorded with `signature`. */
  async function expectFirstHopOnce(id: number, signature: string) {
    const { route, steps } = await routeOnChain(t, id);
    assert.equal(route.nextStep, 1);
    assert.deepEqual(
      steps.map((step) => step.status),
      ['executed', 'pending', 'pending'],
    );
    assert.equal(
      (await t.chain.chain.getTokenAccount(route.hops[0]!))?.amount,
      route.netAmount,
      'the first intermediate account holds the net amount once',
    );
    const transfer = await transferOf(caller, id);
    assert.equal(transfer.progress.hopsCompleted, 1);
    assert.deepEqual(transfer.signatures.hops, [signature]);
  }

  test('a hop transaction the network dropped is replaced once its blockhash expired, and runs once', async () => {
    const route = await dueRoute();
    const dropped = signal<WireTransactionInput>();
    let dropping = true;
    const chain: Chain = {
      ...t.chain.chain,
      // An RPC node that accepts the first hop transaction but never forwards it.
      async sendTransaction(wire, options) {
        if (!dropping) return t.chain.chain.sendTransaction(wire, options);
        dropping = false;
        dropped.resolve(wire);
        return signatureOf(wire);
      },
    };
    const keeper = keeperWorker(t, { chain });
    const keeperBefore = await lamports(t, route.keeper);

    const round = keeper.runOnce();
    const lost = await dropped.promise;
    // The keeper waits for it while its blockhash lives, then gives it up.
    t.clock.advance(BLOCKHASH_LIFETIME_MS);
    assert.equal(await round, 1);
    assert.equal((await routeOnChain(t, route.id)).route.nextStep, 0);

    // The next round finds it in no history of the chain, and signs a fresh transaction, which lands.
    assert.equal(await keeper.runOnce(), 1);
    assert.equal(await keeper.hops('retried'), 1);
    const recorded = (await transferOf(caller, route.id)).signatures.hops[0];
    assert.notEqual(recorded, signatureOf(lost));
    await expectFirstHopOnce(route.id, recorded);
    // The dropped bytes can never land now.
    await assert.rejects(t.chain.chain.sendTransaction(lost as Base64EncodedWireTransaction), (error) =>
      isChainError(error, 'CHAIN_BLOCKHASH_NOT_FOUND'),
    );
    const [status] = await t.chain.chain.getSignatureStatuses([signatureOf(lost)], {
      searchTransactionHistory: true,
    });
    assert.equal(status, null);
    // The keeper paid for the transaction that landed, and for nothing else.
    const fee = (await t.chain.chain.getTransaction(recorded))!.fee;
    assert.equal(await lamports(t, route.keeper), keeperBefore - BigInt(fee));
  });

  test('a hop the network dropped is sent again, the same bytes, and lands before its blockhash expires', async () => {
    const route = await dueRoute();
    const sends: WireTransactionInput[] = [];
    const chain: Chain = {
      ...t.chain.chain,
      // An RPC node that accepts the first two sends of a hop but never forwards them.
      async sendTransaction(wire, options) {
        sends.push(wire);
        if (sends.length <= 2) return signatureOf(wire);
        return t.chain.chain.sendTransaction(wire, options);
      },
    };
    const keeper = keeperWorker(t, { chain });
    const round = keeper.runOnce();
    await waitUntil(async () => sends.length >= 1, 'the hop was sent', 10_000);
    // Every 2 s on the service's clock the keeper sends the same bytes again.
    for (const expected of [2, 3]) {
      t.clock.advance(2_000);
      await waitUntil(async () => sends.length >= expected, `send ${expected} of the hop`, 10_000);
    }
    assert.equal(await round, 1);
    assert.equal(new Set(sends.map(String)).size, 1, 'one transaction, sent three times');
    await expectFirstHopOnce(route.id, signatureOf(sends[0]!));
    assert.equal(await keeper.hops('retried'), 0, 'nothing was given up');
  });

  test('a hop counts as landed only once confirmed: a processed status is waited out', async () => {
    const route = await dueRoute();
    const confirmed = signal<void>();
    let processedReads = 0;
    let open = false;
    void confirmed.promise.then(() => {
      open = true;
    });
    const chain: Chain = {
      ...t.chain.chain,
      // The node shows the hop `processed` until the test lets it be `confirmed`.
      async getSignatureStatuses(signatures, options) {
        const statuses = await t.chain.chain.getSignatureStatuses(signatures, options);
        if (open) return statuses;
        return statuses.map((status) => {
          if (!status) return status;
          processedReads += 1;
          return { ...status, confirmationStatus: 'processed' as const };
        });
      },
    };
    const keeper = keeperWorker(t, { chain });
    const round = keeper.runOnce();
    await waitUntil(async () => processedReads >= 3, 'the hop was seen processed', 10_000);
    assert.equal(
      (await transferOf(caller, route.id)).progress.hopsCompleted,
      0,
      'not recorded while processed',
    );
    confirmed.resolve();
    assert.equal(await round, 1);
    await expectFirstHopOnce(route.id, (await transferOf(caller, route.id)).signatures.hops[0]!);
  });

  test('a hop puts its compute budget first, its limit what its simulation used plus a margin', async () => {
    const route = await dueRoute();
    const sent: WireTransactionInput[] = [];
    const chain: Chain = {
      ...t.chain.chain,
      async sendTransaction(wire, options) {
        sent.push(wire);
        return t.chain.chain.sendTransaction(wire, options);
      },
    };
    assert.equal(await keeperWorker(t, { chain }).runOnce(), 1);
    await expectFirstHopOnce(route.id, signatureOf(sent[0]!));
    const message = decompileTransactionMessage(
      getCompiledTransactionMessageDecoder().decode(
        getTransactionDecoder().decode(getBase64Encoder().encode(sent[0] as string)).messageBytes,
      ),
    );
    const instructions = message.instructions as readonly { programAddress: Address; data?: Uint8Array }[];
    const programs = instructions.map((instruction) => instruction.programAddress);
    assert.deepEqual(programs.slice(0, 2), [COMPUTE_BUDGET_PROGRAM_ADDRESS, COMPUTE_BUDGET_PROGRAM_ADDRESS]);
    assert.equal(programs.at(-1), t.platform.programAddress);
    // No fixed figure: the units the hop used on this chain, a tenth more and a thousand.
    const limit = instructions.find(
      (instruction) =>
        instruction.programAddress === COMPUTE_BUDGET_PROGRAM_ADDRESS &&
        identifyComputeBudgetInstruction(instruction.data!) === ComputeBudgetInstruction.SetComputeUnitLimit,
    )!;
    const { units } = getSetComputeUnitLimitInstructionDataDecoder().decode(limit.data!);
    const used = Number((await t.chain.chain.getTransaction(signatureOf(sent[0]!)))!.computeUnitsConsumed);
    assert.ok(units >= used, `limit ${units} covers the ${used} units used`);
    assert.ok(units <= withMargin(used) + 500, `limit ${units} is what ${used} units need, with the margin`);
    assert.notEqual(units, COMPUTE_UNIT_LIMITS.executeStep, 'not the fallback');
  });

  test('a hop that landed in the last valid block, after a status read that missed it, is recorded and not replaced', async () => {
    const route = await dueRoute();
    let sent: WireTransactionInput | undefined;
    let raced = false;
    const chain: Chain = {
      ...t.chain.chain,
      async sendTransaction(wire) {
        sent ??= wire;
        return signatureOf(wire);
      },
      // The status is read just before the transaction lands; by the next read of the block
      // height its blockhash has expired.
      async getSignatureStatuses(signatures, options) {
        if (raced || !sent) return t.chain.chain.getSignatureStatuses(signatures, options);
        raced = true;
        await t.chain.chain.sendTransaction(sent as Base64EncodedWireTransaction);
        t.clock.advance(BLOCKHASH_LIFETIME_MS);
        return signatures.map(() => null);
      },
    };
    const keeper = keeperWorker(t, { chain });
    assert.equal(await keeper.runOnce(), 1);
    await expectFirstHopOnce(route.id, signatureOf(sent!));
    assert.equal(await keeper.runOnce(), 0, 'nothing left to do until hop 2');
  });

  test('a worker that dies after sending its hop: at once another records the hop from the chain', async () => {
    const route = await dueRoute();
    const sent = signal<Signature>();
    const unstick = signal<void>();
    const stuckChain: Chain = {
      ...t.chain.chain,
      async sendTransaction(wire, options) {
        const signature = await t.chain.chain.sendTransaction(wire, options);
        sent.resolve(signature);
        return signature;
      },
      // A connection that hangs after the send, until the test lets it fail.
      async getSignatureStatuses() {
        await unstick.promise;
        throw new Error('connection reset');
      },
    };
    const elsewhere = await otherWorkerProcess(t.database.db);
    const stuck = keeperWorker(t, { chain: stuckChain, worker: elsewhere.id });
    const stuckRound = stuck.runOnce();
    const signature = await sent.promise;

    // The hop landed; nobody recorded it. While its worker lives, no one else touches the route,
    // however long it takes.
    const other = keeperWorker(t);
    assert.equal(await other.runOnce(), 0);
    t.clock.advance(120_000);
    assert.equal(await other.runOnce(), 0);
    // Its process dies: the route is free, and the hop's status is read from the chain.
    await elsewhere.die();
    assert.equal(await other.runOnce(), 1);
    await expectFirstHopOnce(route.id, signature);

    // The stuck worker gives up at last; with its claim gone, it changes nothing.
    unstick.resolve();
    assert.equal(await stuckRound, 1);
    await expectFirstHopOnce(route.id, signature);
    await travelTo(t, route.t0 + 2n * INTERVAL);
    assert.equal(await other.runOnce(), 1, 'hop 2 runs on time');
  });

  test('a hop slow to land holds back no other route: the worker keeps its other slots busy meanwhile', async () => {
    const routes = await deployDueRoutes(t, caller, [usdc, usdc, usdc, usdc]);
    const { chain, sent, landed } = slowFirstHop();
    // Two routes at a time: while one waits for its slow hop, the other slot carries the rest.
    const keeper = keeperWorker(t, { chain, concurrency: 2 });
    const round = keeper.runOnce();
    await waitUntil(async () => sent.length >= 6, 'the other routes’ hops were sent', 10_000);
    landed.resolve();
    await round;
    while (!(await allCompleted(t, routes))) assert.ok((await keeper.runOnce()) > 0, 'work is left');
    assert.equal(new Set(sent).size, 12, 'every hop sent once');
  });

  test('a hop slow to land holds back no route that falls due meanwhile', async () => {
    const [first] = await deployDueRoutes(t, caller, [usdc]);
    const { chain, sent, landed } = slowFirstHop();
    const keeper = keeperWorker(t, { chain });
    const round = keeper.runOnce();
    await waitUntil(async () => sent.length === 1, 'the first route’s hop was sent', 10_000);
    // Another route is taken over while the first hop is in hand, and falls due.
    const [second] = await deployDueRoutes(t, caller, [usdc]);
    await waitUntil(
      async () => (await transferOf(caller, second!.id)).progress.hopsCompleted === 1,
      'the second route’s first hop landed while the first one waits',
      15_000,
    );
    assert.equal((await transferOf(caller, first!.id)).progress.hopsCompleted, 0);
    landed.resolve();
    assert.equal(await round, 2);
    assert.equal((await transferOf(caller, first!.id)).progress.hopsCompleted, 1);
  });

  test('a keeper that cannot pay its fee: retried with backoff, reported low, and the hop runs once it is funded', async () => {
    const route = await dueRoute();
    const funded = await lamports(t, route.keeper);
    await t.chain.cheats.setAccount(route.keeper, { lamports: 1_000n });
    const keeper = keeperWorker(t);

    assert.equal(await keeper.runOnce(), 1);
    assert.equal(await keeper.hops('retried'), 1);
    const retried = keeper.logs.find((line) => line.msg === 'hop retried');
    assert.match(String(retried?.reason), /InsufficientFundsForFee|AccountNotFound/);
    assert.ok(keeper.logs.some((line) => line.msg === 'keeper running low'));
    assert.equal((await routeOnChain(t, route.id)).route.nextStep, 0);
    assert.equal(await keeper.runOnce(), 0, 'not again at once');

    await t.chain.cheats.setAccount(route.keeper, { lamports: funded });
    t.clock.advance(2_000);
    assert.equal(await keeper.runOnce(), 1);
    const recorded = (await transferOf(caller, route.id)).signatures.hops[0];
    await expectFirstHopOnce(route.id, recorded);
  });
});
