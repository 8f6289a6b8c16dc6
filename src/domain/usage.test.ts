import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TRANSFER_STATUSES } from './transfer.ts';
import { USAGE_COUNT_FIELDS, usageCounts } from './usage.ts';

test('every status has a field of its own', () => {
  const fields = TRANSFER_STATUSES.map((status) => USAGE_COUNT_FIELDS[status]);
  assert.equal(new Set(fields).size, TRANSFER_STATUSES.length);
});

test('a status without transfers counts 0, and the counts add up to the total', () => {
  assert.deepEqual(usageCounts({ refunded: 2, awaiting_signature: 1, completed: 4 }), {
    totalTransfers: 7,
    quoteTransfers: 0,
    awaitingSignatureTransfers: 1,
    processingTransfers: 0,
    completedTransfers: 4,
    failedTransfers: 0,
    expiredTransfers: 0,
    refundedTransfers: 2,
  });
  assert.equal(usageCounts({}).totalTransfers, 0);
});
