import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TransferView } from '../../domain/transfer-view.ts';
import { nextStep } from './next-step.ts';

const noRecovery = {
  canRescue: false,
  rescuableLamports: 0,
  rescuableAccounts: [],
  canReclaimRent: false,
  reclaimableLamports: 0,
};

/** The fields of a transfer the next step reads. */
function transfer(status: TransferView['status'], extra: Partial<TransferView> = {}): TransferView {
  return {
    id: 7,
    status,
    hops: 3,
    expiresAt: '2026-06-01T12:15:00.000Z',
    progress: { hopsCompleted: 1, hopsTotal: 3 },
    recovery: null,
    ...extra,
  } as TransferView;
}

test('the next step follows the status, and recovery names what returns', () => {
  const titles = (
    [
      ['quote', {}],
      ['awaiting_signature', {}],
      ['processing', {}],
      ['completed', { recovery: { ...noRecovery, canReclaimRent: true, reclaimableLamports: 6_043_440 } }],
      ['completed', { recovery: noRecovery }],
      ['failed', { recovery: { ...noRecovery, canRescue: true, rescuableLamports: 18_521_800 } }],
      ['refunded', { recovery: noRecovery }],
      ['expired', {}],
    ] as const
  ).map(([status, extra]) => nextStep(transfer(status, extra), null).title);
  assert.deepEqual(titles, [
    'Prepare the route',
    'Sign, broadcast and confirm',
    'Nothing to do',
    'Reclaim the rent',
    'Nothing to do',
    'Rescue the funds',
    'Nothing to do',
    'Nothing to do',
  ]);
  assert.match(
    nextStep(transfer('quote'), null).detail,
    /POST \/api\/v1\/transfers\/7\/prepare .* before 2026-06-01 12:15:00 UTC/,
  );
  assert.equal(
    nextStep(transfer('processing'), new Date('2026-06-01T12:04:01Z')).detail,
    'The keeper runs the hops on schedule. Hop 2 of 3 is due at 2026-06-01 12:04:01 UTC.',
  );
  assert.match(
    nextStep(
      transfer('completed', {
        recovery: { ...noRecovery, canReclaimRent: true, reclaimableLamports: 6_043_440 },
      }),
      null,
    ).detail,
    /^The source can get 0\.00604344 SOL back: /,
  );
  assert.match(
    nextStep(
      transfer('failed', { recovery: { ...noRecovery, canRescue: true, rescuableLamports: 18_521_800 } }),
      null,
    ).detail,
    /^The source wallet gets 0\.0185218 SOL and the route's tokens back: /,
  );
  assert.equal(
    nextStep(transfer('failed', { recovery: noRecovery }), null).detail,
    'POST /api/v1/transfers/7/rescue/prepare answers what the source can rescue now.',
  );
  assert.equal(
    nextStep(
      transfer('refunded', { recovery: { ...noRecovery, canReclaimRent: true, reclaimableLamports: 5000 } }),
      null,
    ).title,
    'Reclaim what arrived since',
  );
});
