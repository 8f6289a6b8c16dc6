import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Signature } from '@solana/kit';
import { withCoalescedReads } from './coalesced-reads.ts';
import type { BlockHeightReader, SignatureStatus, SignatureStatusReader } from './types.ts';

/** A node that answers each signature with its own slot, and records the calls it was sent. */
function recordingNode() {
  const statusCalls: { signatures: readonly Signature[]; history: boolean }[] = [];
  let heightCalls = 0;
  let failWith: Error | undefined;
  const node: SignatureStatusReader & BlockHeightReader & { extra(): string } = {
    async getSignatureStatuses(signatures, options) {
      statusCalls.push({ signatures, history: options?.searchTransactionHistory ?? false });
      if (failWith) throw failWith;
      return signatures.map((signature): SignatureStatus | null =>
        signature.startsWith('unknown')
          ? null
          : { slot: BigInt(signature.length), err: null, confirmationStatus: 'confirmed' },
      );
    },
    async getBlockHeight() {
      heightCalls += 1;
      await new Promise((resolve) => setTimeout(resolve, 10));
      return BigInt(heightCalls);
    },
    async getSlot() {
      return 7n;
    },
    extra: () => 'the node’s own',
  };
  return {
    node,
    statusCalls,
    heightCalls: () => heightCalls,
    fail(error: Error | undefined) {
      failWith = error;
    },
  };
}

const sig = (name: string) => name as Signature;

test('status reads made together go to the node as one call, each caller getting its own answer', async () => {
  const { node, statusCalls } = recordingNode();
  const chain = withCoalescedReads(node);
  const names = Array.from({ length: 300 }, (_, i) => (i % 7 === 0 ? `unknown${i}` : `s${'x'.repeat(i)}`));
  const answers = await Promise.all(names.map((name) => chain.getSignatureStatuses([sig(name)])));
  assert.deepEqual(
    answers.map(([status]) => status?.slot ?? null),
    names.map((name) => (name.startsWith('unknown') ? null : BigInt(name.length))),
  );
  // A node takes at most 256 signatures a call.
  assert.deepEqual(
    statusCalls.map((call) => call.signatures.length),
    [256, 44],
  );
  assert.ok(statusCalls.every((call) => !call.history));
});

test('history searches are coalesced apart from recent-status reads; a read of several, or with a signal, goes alone', async () => {
  const { node, statusCalls } = recordingNode();
  const chain = withCoalescedReads(node);
  await Promise.all([
    chain.getSignatureStatuses([sig('a')], { searchTransactionHistory: true }),
    chain.getSignatureStatuses([sig('b')]),
    chain.getSignatureStatuses([sig('c')], { searchTransactionHistory: true }),
    chain.getSignatureStatuses([sig('d'), sig('e')]),
    chain.getSignatureStatuses([sig('f')], { signal: new AbortController().signal }),
  ]);
  const calls = statusCalls.map(
    (call) => `${call.history ? 'history' : 'recent'}:${call.signatures.join(',')}`,
  );
  assert.deepEqual(calls.sort(), ['history:a,c', 'recent:b', 'recent:d,e', 'recent:f']);
});

test('a failed call fails every read that shared it, and the next reads call again', async () => {
  const { node, statusCalls, fail } = recordingNode();
  const chain = withCoalescedReads(node);
  fail(new Error('429 Too Many Requests'));
  const failed = await Promise.allSettled([
    chain.getSignatureStatuses([sig('a')]),
    chain.getSignatureStatuses([sig('b')]),
  ]);
  assert.deepEqual(
    failed.map((outcome) => outcome.status === 'rejected' && String(outcome.reason)),
    ['Error: 429 Too Many Requests', 'Error: 429 Too Many Requests'],
  );
  fail(undefined);
  const [[status]] = await Promise.all([chain.getSignatureStatuses([sig('abc')])]);
  assert.equal(status?.slot, 3n);
  assert.equal(statusCalls.length, 2);
});

test('block height readers share a read in flight; a later read asks the node again', async () => {
  const { node, heightCalls } = recordingNode();
  const chain = withCoalescedReads(node);
  const together = await Promise.all([
    chain.getBlockHeight(),
    chain.getBlockHeight(),
    chain.getBlockHeight(),
  ]);
  assert.deepEqual(together, [1n, 1n, 1n]);
  assert.equal(await chain.getBlockHeight(), 2n);
  assert.equal(heightCalls(), 2);
  // The chain's other methods are its own.
  assert.equal(chain.extra(), 'the node’s own');
  assert.equal(await chain.getSlot(), 7n);
});
