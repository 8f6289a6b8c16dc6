import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppError } from './errors.ts';
import {
  assertNotExpired,
  isExpiredQuote,
  reportsRecovery,
  supportBundleIdFrom,
  TRANSFER_PHASES,
  type TransferPhase,
} from './transfer.ts';

test('a quote is expired from expiresAt on, and only while still a quote', () => {
  const expiresAt = new Date('2026-06-01T12:15:00Z');
  assert.equal(isExpiredQuote({ status: 'quote', expiresAt }, new Date('2026-06-01T12:14:59.999Z')), false);
  assert.equal(isExpiredQuote({ status: 'quote', expiresAt }, expiresAt), true);
  assert.equal(isExpiredQuote({ status: 'awaiting_signature', expiresAt }, expiresAt), true);
  assert.equal(isExpiredQuote({ status: 'processing', expiresAt }, new Date('2026-06-02T00:00:00Z')), false);
});

test('using an expired transfer is MH_034, before or after the worker marked it', () => {
  const expiresAt = new Date('2026-06-01T12:15:00Z');
  const late = new Date('2026-06-01T12:16:00Z');
  for (const status of ['quote', 'awaiting_signature', 'expired'] as const) {
    assert.throws(
      () => assertNotExpired({ id: 7, status, expiresAt }, late),
      (error: unknown) => error instanceof AppError && error.code === 'MH_034' && error.status === 410,
    );
  }
  assert.doesNotThrow(() =>
    assertNotExpired({ id: 7, status: 'quote', expiresAt }, new Date('2026-06-01T12:00:00Z')),
  );
});

test('recovery is reported in the phases of decision C1 only', () => {
  const reported: TransferPhase[] = ['failed', 'recoverable', 'settled', 'rescued', 'reclaimed'];
  for (const phase of TRANSFER_PHASES) assert.equal(reportsRecovery(phase), reported.includes(phase), phase);
});

test('support references are readable and free of look-alike characters', () => {
  const id = supportBundleIdFrom(new Uint8Array([0, 1, 2, 3, 31, 32, 255, 100]));
  assert.equal(id, 'TR-2345-Z2Z6');
  assert.match(
    supportBundleIdFrom(crypto.getRandomValues(new Uint8Array(8))),
    /^TR-[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}$/,
  );
});
