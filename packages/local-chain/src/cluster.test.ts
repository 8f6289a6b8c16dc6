import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  type Address,
  createKeyPairSignerFromPrivateKeyBytes,
  getAddressEncoder,
  type KeyPairSigner,
  lamports,
} from '@solana/kit';
import { getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
import { getTransferSolInstruction } from '@solana-program/system';
import { createLedger, type Ledger } from './ledger.ts';
import { type ChainProfile, type ClusterBehaviour, chainProfile, MAINNET_CLUSTER } from './profile.ts';
import { manualClock, signTransaction } from './testing.ts';

const SOL = 1_000_000_000n;
const key = (address: Address) => new Uint8Array(getAddressEncoder().encode(address));
const CALM = { ...MAINNET_CLUSTER.congestion, calmMeanSlots: Number.POSITIVE_INFINITY };
/** A cluster that does nothing unusual unless a test says so. */
const PLAIN: ClusterBehaviour = {
  ...MAINNET_CLUSTER,
  dropShare: 0,
  delayedShare: 0,
  forkShare: 0,
  congestion: CALM,
};

function signer(name: string): Promise<KeyPairSigner> {
  return createKeyPairSignerFromPrivateKeyBytes(createHash('sha256').update(name).digest());
}

async function chain(cluster: Partial<ClusterBehaviour> = {}, seed = 'test') {
  const clock = manualClock(new Date('2026-07-01T00:00:00.000Z'));
  const profile: ChainProfile = { ...chainProfile('mainnet', seed), cluster: { ...PLAIN, ...cluster } };
  const ledger = createLedger({ clock, profile });
  const payer = await signer(`payer:${seed}`);
  const outcome = ledger.airdrop(key(payer.address), 10n * SOL);
  assert.equal(outcome.kind, 'landed');
  /** Lets `count` slots pass. */
  const slots = (count: number) => {
    clock.advance(count * ledger.slotMs);
    ledger.sync();
  };
  slots(40);
  return { ledger, payer, slots };
}

/** A signed SOL transfer of `amount` from `payer`, at `price` micro-lamports per compute unit. */
async function transfer(ledger: Ledger, payer: KeyPairSigner, to: Address, amount: bigint, price = 0n) {
  const { blockhash, lastValidBlockHeight } = ledger.latestBlockhash('confirmed');
  return signTransaction(
    payer,
    [
      getSetComputeUnitPriceInstruction({ microLamports: price }),
      getTransferSolInstruction({ source: payer, destination: to, amount: lamports(amount) }),
    ],
    { blockhash, lastValidBlockHeight: BigInt(lastValidBlockHeight) },
  );
}

const status = (ledger: Ledger, signature: string) => {
  const record = ledger.signatureStatus(signature, true);
  return record && ledger.confirmationOf(record.slot).confirmationStatus;
};

describe('the mainnet profile', () => {
  test('a transaction is processed in a later slot, confirmed a slot or two after, finalized 32 after; reads follow each commitment', async () => {
    const { ledger, payer, slots } = await chain();
    const to = (await signer('recipient')).address;
    const sent = await transfer(ledger, payer, to, SOL);
    assert.equal(ledger.submit(sent.bytes, { preflight: true }).kind, 'queued');
    assert.equal(status(ledger, sent.signature), null, 'sent, not yet in a block');
    slots(1);
    const landedAt = ledger.slot();
    assert.equal(status(ledger, sent.signature), 'processed');
    assert.equal(ledger.getBalance(key(to), 'processed'), SOL);
    assert.equal(ledger.getBalance(key(to), 'confirmed'), 0n, 'confirmed reads do not see a processed block');
    assert.equal(ledger.getTransaction(sent.signature, 'confirmed'), undefined);
    slots(2);
    assert.equal(status(ledger, sent.signature), 'confirmed');
    assert.equal(ledger.getBalance(key(to), 'confirmed'), SOL);
    assert.equal(ledger.getBalance(key(to), 'finalized'), 0n);
    assert.equal(ledger.getTransaction(sent.signature, 'confirmed')?.slot, landedAt);
    slots(30);
    assert.equal(status(ledger, sent.signature), 'finalized');
    assert.equal(ledger.getBalance(key(to), 'finalized'), SOL);
    assert.ok(
      ledger.slot('finalized') <= ledger.slot('confirmed') && ledger.slot('confirmed') < ledger.slot(),
    );
  });

  test('a dropped send never lands; sent again, the same bytes land once', async () => {
    const { ledger, payer, slots } = await chain({ dropShare: 1 });
    const to = (await signer('recipient')).address;
    const sent = await transfer(ledger, payer, to, SOL);
    assert.equal(
      ledger.submit(sent.bytes, { preflight: true }).kind,
      'queued',
      'the node takes it all the same',
    );
    slots(20);
    assert.equal(status(ledger, sent.signature), null, 'no leader had it');
    const other = await chain({}, 'test');
    const again = await transfer(other.ledger, other.payer, to, SOL);
    other.ledger.submit(again.bytes, { preflight: true });
    other.ledger.submit(again.bytes, { preflight: true });
    other.slots(3);
    assert.equal(other.ledger.getBalance(key(to), 'confirmed'), SOL, 'sent twice, it ran once');
  });

  test('a delayed transaction lands only several slots after it was sent', async () => {
    const { ledger, payer, slots } = await chain({ delayedShare: 1, maxDelaySlots: 5 });
    const sent = await transfer(ledger, payer, (await signer('recipient')).address, SOL);
    const sentAt = ledger.slot();
    ledger.submit(sent.bytes, { preflight: true });
    slots(1);
    assert.equal(status(ledger, sent.signature), null);
    slots(5);
    const landed = ledger.signatureStatus(sent.signature, true);
    assert.ok(
      landed && landed.slot >= sentAt + 2 && landed.slot <= sentAt + 5,
      `landed in slot ${landed?.slot}`,
    );
  });

  test('a block on a minority fork is rolled back: its transaction, its state and its blockhash are gone', async () => {
    const { ledger, payer, slots } = await chain({ forkShare: 1, forkRequeueShare: 0 });
    const to = (await signer('recipient')).address;
    const before = ledger.getBalance(key(payer.address));
    const sent = await transfer(ledger, payer, to, SOL);
    ledger.submit(sent.bytes, { preflight: true });
    slots(1);
    const forked = ledger.slot();
    const forkHash = ledger.latestBlockhash('processed').blockhash;
    assert.equal(status(ledger, sent.signature), 'processed');
    assert.equal(ledger.getBalance(key(to), 'processed'), SOL);
    slots(1);
    assert.equal(status(ledger, sent.signature), null, 'the fork was abandoned');
    assert.equal(ledger.getBalance(key(to), 'processed'), 0n);
    assert.equal(ledger.getBalance(key(payer.address), 'processed'), before, 'not even the fee was kept');
    assert.equal(ledger.isSkipped(forked), true);
    assert.deepEqual([ledger.clusterStats()?.forks, ledger.clusterStats()?.rolledBack], [1, 1]);
    assert.equal(ledger.isBlockhashValid(forkHash), false);
    assert.equal(ledger.block(forked + 1).parentSlot, forked - 1);
    // Sent again, it lands (this chain forks every block with a transaction: the next one is kept
    // only because a faucet transaction pins it).
    ledger.submit(sent.bytes, { preflight: true });
    slots(1);
    ledger.airdrop(key((await signer('pin')).address), 1n);
    slots(3);
    assert.equal(status(ledger, sent.signature), 'confirmed');
    assert.equal(ledger.getBalance(key(to), 'confirmed'), SOL);
  });

  test('under congestion a transaction priced below the going rate waits; one paying it lands; the fee history shows the rate', async () => {
    const congested = {
      ...CALM,
      calmMeanSlots: 1,
      congestedMeanSlots: 1_000,
      minRate: 20_000n,
      maxRate: 20_001n,
      dropShare: 0,
    };
    const { ledger, payer, slots } = await chain({ congestion: congested });
    const to = (await signer('recipient')).address;
    const cheap = await transfer(ledger, payer, to, SOL, 1_000n);
    const paying = await transfer(ledger, payer, to, 2n * SOL, 20_000n);
    ledger.submit(cheap.bytes, { preflight: true });
    ledger.submit(paying.bytes, { preflight: true });
    slots(5);
    assert.equal(status(ledger, paying.signature), 'confirmed');
    assert.equal(status(ledger, cheap.signature), null, 'still waiting for a leader');
    assert.equal(ledger.pendingCount(), 1);
    const fees = ledger.recentPrioritizationFees([]).slice(-5);
    assert.ok(
      fees.every((entry) => entry.prioritizationFee === 20_000n),
      JSON.stringify(fees, (_k, v) => String(v)),
    );
  });

  test('the same seed gives the same run; another seed, another', async () => {
    async function run(seed: string) {
      const { ledger, payer, slots } = await chain(
        { dropShare: 0.3, delayedShare: 0.3, forkShare: 0.2 },
        seed,
      );
      const to = (await signer('recipient')).address;
      const signatures: string[] = [];
      for (let i = 1n; i <= 12n; i++) {
        const sent = await transfer(ledger, payer, to, SOL / 10n + i);
        assert.equal(ledger.submit(sent.bytes, { preflight: true }).kind, 'queued');
        signatures.push(sent.signature);
        slots(1);
      }
      slots(10);
      return signatures.map((signature) => ledger.signatureStatus(signature, true)?.slot ?? null);
    }
    const first = await run('seed-a');
    assert.deepEqual(await run('seed-a'), first);
    assert.notDeepEqual(await run('seed-b'), first);
    assert.ok(first.includes(null) && first.some((slot) => slot !== null), `a mixed run: ${first}`);
  });
});
