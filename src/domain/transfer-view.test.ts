import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allowsRecovery, type Recovery, recoveryInPhase } from './transfer.ts';
import { lamportsToJson } from './transfer-view.ts';

test('lamport figures become JSON integers only when exact', () => {
  assert.equal(lamportsToJson(0n), 0);
  assert.equal(lamportsToJson(9_007_199_254_740_991n), Number.MAX_SAFE_INTEGER);
  assert.throws(() => lamportsToJson(9_007_199_254_740_992n), RangeError);
  assert.throws(() => lamportsToJson(-1n), RangeError);
});

test('recovery shows only what the phase allows: rescue when failed or recoverable, reclaim once it ended', () => {
  const figures: Recovery = {
    canRescue: true,
    rescuableLamports: 10n,
    rescuableAccounts: [{ kind: 'route_pda', lamports: 10n }],
    canReclaimRent: true,
    reclaimableLamports: 7n,
  };
  const none = { canRescue: false, rescuableLamports: 0n, rescuableAccounts: [] };
  const noReclaim = { canReclaimRent: false, reclaimableLamports: 0n };
  assert.deepEqual(recoveryInPhase(figures, 'failed'), { ...figures, ...noReclaim });
  assert.deepEqual(recoveryInPhase(figures, 'recoverable'), { ...figures, ...noReclaim });
  for (const phase of ['settled', 'rescued', 'reclaimed'] as const) {
    assert.deepEqual(recoveryInPhase(figures, phase), { ...figures, ...none }, phase);
  }
  assert.deepEqual(recoveryInPhase(figures, 'executing'), { ...figures, ...none, ...noReclaim });
  assert.equal(allowsRecovery('rescue', 'executing'), false);
  assert.equal(allowsRecovery('reclaim', 'rescued'), true);
});
