// What the keeper offers per compute unit for a hop: the market's price of the accounts the hop
// writes, read from the chain's recent blocks when the hop is signed; raised each time a hop
// transaction expires unlanded, by whichever worker sends the next one; held within the fee budget
// the bundle funded, whose unspent part the source gets back.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import {
  AccountRole,
  type Address,
  lamports as asLamports,
  generateKeyPairSigner,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getSignatureFromTransaction,
  getTransactionDecoder,
  type KeyPairSigner,
} from '@solana/kit';
import { getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
import { getTransferSolInstruction } from '@solana-program/system';
import { signTransaction, slotsMs } from '@transfer-router/local-chain/testing';
import { computeBudgetOf } from '../../src/chain/fees.ts';
import type { Chain, WireTransactionInput } from '../../src/chain/types.ts';
import { type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { otherWorkerProcess } from '../helpers/database.ts';
import { quoteRoute } from '../helpers/route.ts';
import {
  ata,
  broadcast,
  confirmReclaim,
  feesPaidBy,
  holdings,
  prepareRecovery,
  routeRow,
  travelPast,
  UNLIMITED,
} from '../recovery/helpers.ts';
import { deployWithFirstHopDue, keeperWorker, lamports, routeOnChain, transferOf } from './helpers.ts';
import { waitUntil } from './worker-process.ts';

const HOPS = 3;
const ARRIVAL = 600;
const INTERVAL = BigInt(ARRIVAL / HOPS);
/** More than a blockhash lives (150 slots of 400 ms). */
const BLOCKHASH_LIFETIME_MS = 61_000;
/**
 * The fee budget of a 3-hop route prepared when nothing paid a priority fee (the test app's floor
 * is 0): per hop and one more, a signature (5,000) and 25,000 units at 8 × an escalation step of
 * 10,000 micro-lamports (2,000).
 */
const BUDGET = 4n * (5_000n + 2_000n);

/** The wire transaction's bytes. */
const bytesOf = (wire: WireTransactionInput) =>
  typeof wire === 'string' ? getBase64Encoder().encode(wire) : wire;
const signatureOf = (wire: WireTransactionInput) =>
  getSignatureFromTransaction(getTransactionDecoder().decode(bytesOf(wire)));
const budgetOf = (wire: WireTransactionInput) =>
  computeBudgetOf({ base64: Buffer.from(bytesOf(wire)).toString('base64') });

/** The accounts a wire transaction write-locks, by its message header. */
function writableAccounts(wire: WireTransactionInput): Address[] {
  const { messageBytes } = getTransactionDecoder().decode(bytesOf(wire));
  const { header, staticAccounts } = getCompiledTransactionMessageDecoder().decode(messageBytes);
  const signers = header.numSignerAccounts;
  return staticAccounts.filter((_, index) =>
    index < signers
      ? index < signers - header.numReadonlySignerAccounts
      : index < staticAccounts.length - header.numReadonlyNonSignerAccounts,
  );
}

describe('the price of a hop', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  // A chain of its own for each test: no other route's fees in its blocks.
  beforeEach(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
  });
  afterEach(() => t.close());

  /** A deployed 3-hop route whose first hop is due now. */
  async function dueRoute() {
    const route = await quoteRoute(t, caller, { hops: HOPS, mint: usdc, arrivalSeconds: ARRIVAL });
    const before = await holdings(t, route);
    return { ...route, before, ...(await deployWithFirstHopDue(t, caller, route, INTERVAL)) };
  }

  /** What the transfer's row says: the keeper's funding, what its transactions spent, the stored hop transaction. */
  async function hopFees(id: number) {
    const { rows } = await t.database.db.query<{ spent: string; funding: string; stored: string | null }>(
      `SELECT hop_fees_spent_lamports AS spent, keeper_funding_lamports AS funding, hop_tx_signature AS stored
         FROM transfers WHERE id = $1`,
      [id],
    );
    return { spent: BigInt(rows[0]!.spent), funding: BigInt(rows[0]!.funding), stored: rows[0]!.stored };
  }

  /**
   * Makes `account` busy on chain: each of the last 150 blocks holds a transaction that
   * write-locks it at `microLamports` per compute unit, and another that pays nothing and writes
   * only its own payer (so the blocks' least price stays 0).
   */
  async function busy(account: Address, microLamports: bigint) {
    const [payer, other] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
    await Promise.all([payer, other].map((wallet) => t.chain.cheats.airdrop(wallet.address, 1_000_000_000n)));
    const selfTransfer = (wallet: KeyPairSigner) =>
      getTransferSolInstruction({ source: wallet, destination: wallet.address, amount: asLamports(1n) });
    for (let slot = 0; slot < 150; slot++) {
      t.clock.advance(slotsMs(1));
      const lifetime = await t.chain.chain.getLatestBlockhash();
      const transfer = selfTransfer(payer);
      const locking = {
        ...transfer,
        accounts: [...transfer.accounts, { address: account, role: AccountRole.WRITABLE }],
      };
      for (const signed of await Promise.all([
        signTransaction(payer, [getSetComputeUnitPriceInstruction({ microLamports }), locking], lifetime),
        signTransaction(other, [selfTransfer(other)], lifetime),
      ]))
        await t.chain.chain.sendTransaction(signed.base64);
    }
  }

  /**
   * The chain the keeper sees, noting every transaction it sends and the accounts it asks recent
   * fees of; `drop` makes the node accept sends without forwarding them.
   */
  function observed(options: { drop?: () => boolean } = {}) {
    const sent: WireTransactionInput[] = [];
    const asked: (readonly Address[])[] = [];
    const chain: Chain = {
      ...t.chain.chain,
      async sendTransaction(wire, callOptions) {
        sent.push(wire);
        if (options.drop?.()) return signatureOf(wire);
        return t.chain.chain.sendTransaction(wire, callOptions);
      },
      async getRecentPrioritizationFees(addresses, callOptions) {
        asked.push(addresses);
        return t.chain.chain.getRecentPrioritizationFees(addresses, callOptions);
      },
    };
    return { chain, sent, asked };
  }

  /** What the network charged for a landed transaction. */
  const feeOf = async (wire: WireTransactionInput) =>
    BigInt((await t.chain.chain.getTransaction(signatureOf(wire)))!.fee);

  test('priced from the recent fees of the accounts the hop writes, not of the block at large', async () => {
    const route = await dueRoute();
    // Every recent block wrote the route account at 50,000 micro-lamports; nothing else paid.
    await busy(route.address, 50_000n);
    const { chain, sent, asked } = observed();
    assert.equal(await keeperWorker(t, { chain }).runOnce(), 1);

    assert.equal(sent.length, 1);
    const [hop] = sent;
    assert.equal(budgetOf(hop!).microLamportsPerCu, 50_000n);
    // The addresses asked about are exactly those the hop write-locks: the keeper paying, the
    // route, its step state and the token accounts it moves between.
    assert.equal(asked.length, 1);
    assert.deepEqual([...asked[0]!].sort(), writableAccounts(hop!).sort());
    assert.ok(asked[0]!.includes(route.address) && asked[0]!.includes(route.keeper));
    assert.ok(!asked[0]!.includes(route.source.address), 'the source is not written by a hop');

    assert.equal((await transferOf(caller, route.id)).progress.hopsCompleted, 1);
    const fees = await hopFees(route.id);
    assert.equal(fees.spent, await feeOf(hop!), 'the fee recorded is what the network charged');
    assert.equal(
      fees.spent,
      5_000n + (BigInt(budgetOf(hop!).computeUnitLimit) * 50_000n + 999_999n) / 1_000_000n,
    );
    assert.equal(await lamports(t, route.keeper), fees.funding - fees.spent);
  });

  test('raised after each expiry, by whichever worker sends next; back to the market once the hop lands', async () => {
    const route = await dueRoute();
    const prices: bigint[] = [];
    // Two workers in turn, each with a node that drops what it sends: each hop transaction
    // expires, and stays stored with the route for the next round to judge and replace.
    for (let attempt = 0; attempt < 2; attempt++) {
      const { chain, sent } = observed({ drop: () => true });
      const round = keeperWorker(t, { chain }).runOnce();
      await waitUntil(async () => sent.length === 1, 'the hop was sent', 10_000);
      t.clock.advance(BLOCKHASH_LIFETIME_MS);
      assert.equal(await round, 1);
      prices.push(budgetOf(sent[0]!).microLamportsPerCu);
      assert.equal((await routeOnChain(t, route.id)).route.nextStep, 0, 'it never ran');
      assert.equal((await hopFees(route.id)).stored, signatureOf(sent[0]!));
    }
    // A third worker, whose node forwards: the hop lands at the escalated price.
    const { chain, sent } = observed();
    assert.equal(await keeperWorker(t, { chain }).runOnce(), 1);
    prices.push(budgetOf(sent[0]!).microLamportsPerCu);
    assert.deepEqual(prices, [0n, 10_000n, 20_000n], 'doubled, a step of 10,000 at least');
    assert.equal((await transferOf(caller, route.id)).progress.hopsCompleted, 1);
    // Only the transaction that landed cost anything.
    assert.equal((await hopFees(route.id)).spent, await feeOf(sent[0]!));

    // The next hop starts from the market again.
    await travelPast(t, route.t0 + 2n * INTERVAL);
    const next = observed();
    assert.equal(await keeperWorker(t, { chain: next.chain }).runOnce(), 1);
    assert.equal(budgetOf(next.sent[0]!).microLamportsPerCu, 0n);
  });

  test('a worker that died with its hop in flight: the next one replaces the expired bytes at a higher price', async () => {
    const route = await dueRoute();
    let unstick!: () => void;
    const stuck = new Promise<void>((resolve) => {
      unstick = resolve;
    });
    const dying = observed({ drop: () => true });
    const stuckChain: Chain = {
      ...dying.chain,
      // A connection that hangs after the send, until the test lets it fail.
      async getSignatureStatuses() {
        await stuck;
        throw new Error('connection reset');
      },
    };
    const elsewhere = await otherWorkerProcess(t.database.db);
    const stuckRound = keeperWorker(t, { chain: stuckChain, worker: elsewhere.id }).runOnce();
    await waitUntil(async () => dying.sent.length === 1, 'the hop was sent', 10_000);
    // The bytes it stored expire unlanded, and its process dies.
    t.clock.advance(BLOCKHASH_LIFETIME_MS);
    await elsewhere.die();

    const { chain, sent } = observed();
    assert.equal(await keeperWorker(t, { chain }).runOnce(), 1);
    assert.equal(budgetOf(dying.sent[0]!).microLamportsPerCu, 0n);
    assert.equal(budgetOf(sent[0]!).microLamportsPerCu, 10_000n);
    assert.equal((await transferOf(caller, route.id)).signatures.hops[0], signatureOf(sent[0]!));
    unstick();
    await stuckRound;
    assert.equal((await transferOf(caller, route.id)).progress.hopsCompleted, 1);
  });

  test('held within the route’s budget however high the market; the source gets back all that is unspent', async () => {
    const route = await dueRoute();
    const row = await routeRow(t, route.id);
    const { funding } = await hopFees(route.id);
    assert.equal(funding, 890_880n + BUDGET, "the keeper's rent and the route's fee budget");
    const { chain, sent } = observed();
    const keeper = keeperWorker(t, { chain });
    let spent = 0n;
    for (let step = 0; step < HOPS; step++) {
      await travelPast(t, row.firstReleaseAt! + BigInt(step) * BigInt(row.intervalSeconds!));
      // The market of the route's accounts is at the platform's cap.
      await busy(route.address, 1_000_000n);
      assert.equal(await keeper.runOnce(), 1);
      const hop = sent.at(-1)!;
      const { computeUnitLimit, microLamportsPerCu } = budgetOf(hop);
      // What the budget has left for this hop's priority: less what was spent, this hop's
      // signature, and the signatures of the hops after it and of a MarkFailed.
      const left = BUDGET - spent - 5_000n - 5_000n * BigInt(HOPS - step);
      const affordable = left > 0n ? (left * 1_000_000n) / BigInt(computeUnitLimit) : 0n;
      assert.equal(microLamportsPerCu, affordable < 1_000_000n ? affordable : 1_000_000n, `hop ${step + 1}`);
      spent += await feeOf(hop);
      assert.equal((await hopFees(route.id)).spent, spent);
    }
    assert.equal(sent.length, HOPS);
    assert.ok(spent <= BUDGET - 5_000n, `${spent} spent, a MarkFailed's signature still funded`);
    assert.ok(budgetOf(sent[0]!).microLamportsPerCu > 100_000n, 'the first hop could use the budget');
    assert.equal(await lamports(t, route.keeper), 890_880n + BUDGET - spent);
    assert.equal((await transferOf(caller, route.id)).phase, 'settled');

    // Reclaim: the keeper's leftover comes back with the route's rent. The source is out of pocket
    // by exactly the network's fees (its own and what the keeper actually spent), the flat fee,
    // the rent of the accounts that are others' and the tokens it sent.
    const bundle = await prepareRecovery(caller, route.id, 'reclaim');
    const signatures = await broadcast(t, route.source, bundle);
    assert.equal((await confirmReclaim(caller, route.id, signatures)).statusCode, 200);
    assert.equal(await lamports(t, route.keeper), 0n);
    assert.equal(await feesPaidBy(t, route.keeper), spent);
    const othersRent =
      (await lamports(t, await ata(route.recipient, route.mint))) +
      (route.before.feeTokenExists ? 0n : await lamports(t, await ata(t.platform.configAddress, route.mint)));
    assert.equal(
      await lamports(t, route.source.address),
      route.before.lamports -
        (await feesPaidBy(t, route.source.address)) -
        spent -
        othersRent -
        BigInt(route.estimate.totalFlatFeeLamports),
    );
  });
});
