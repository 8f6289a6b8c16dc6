import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Address, generateKeyPairSigner } from '@solana/kit';
import type { Route, RouteStatus } from './accounts.ts';
import { computeRecovery, type RouteSnapshot } from './recovery.ts';

const address = async () => (await generateKeyPairSigner()).address;

async function snapshot(status: RouteStatus | null, openRoutes = 1): Promise<RouteSnapshot> {
  const a = await Promise.all(Array.from({ length: 6 }, address));
  return {
    routeAddress: a[0]!,
    stepAddresses: [a[3]!],
    route: status
      ? { lamports: 6_000_000n, data: { status, deadlineAt: 1000n, inOrchestrator: true } as Route }
      : null,
    tokenAccounts: [
      { address: a[1]!, lamports: 2_039_280n, amount: 10n },
      { address: a[2]!, lamports: 2_039_280n, amount: 990n },
    ],
    steps: [{ address: a[3]!, lamports: 1_392_000n, data: {} as never }],
    orchestrator: {
      address: a[4]!,
      lamports: 1_280_640n,
      data: { source: a[5]! as Address, openRoutes, bump: 255, routesTotal: 1n },
    },
    keeper: { address: a[5]!, lamports: 900_000n },
  };
}

const ALL = 6_000_000n + 2n * 2_039_280n + 1_392_000n + 1_280_640n + 900_000n;

test('a failed route is rescuable for everything on chain, tokens included', async () => {
  const s = await snapshot('failed');
  const r = computeRecovery(s, 0n);
  assert.equal(r.canRescue, true);
  assert.equal(r.canReclaimRent, false);
  assert.equal(r.rescuableTokens, 1000n);
  assert.equal(r.rescuableLamports, ALL);
  assert.deepEqual(
    r.rescuableAccounts.map((a) => [a.kind, a.lamports]),
    [
      ['route_pda', 6_000_000n],
      ['step_state', 1_392_000n],
      ['ata', 2_039_280n],
      ['ata', 2_039_280n],
      ['orchestrator_config', 1_280_640n],
      ['keeper', 900_000n],
    ],
  );
  assert.equal(r.reclaimableLamports, 0n);
});

test('an active route is rescuable only after its deadline; a settled one only reclaims', async () => {
  const active = await snapshot('active');
  assert.equal(computeRecovery(active, 1000n).canRescue, false);
  assert.equal(computeRecovery(active, 1001n).canRescue, true);
  assert.equal(computeRecovery(active, 1001n).canReclaimRent, false);
  const settled = computeRecovery(await snapshot('settled'), 5000n);
  assert.equal(settled.canRescue, false);
  assert.equal(settled.rescuableTokens, 0n);
  assert.equal(settled.canReclaimRent, true);
  assert.equal(settled.reclaimableLamports, ALL);
  assert.equal(settled.reclaimableStepCount, 1);
});

test('the orchestrator config counts only when this is the source last open route', async () => {
  const shared = computeRecovery(await snapshot('flagged', 2), 0n);
  assert.equal(shared.rescuableLamports, ALL - 1_280_640n);
  assert.equal(
    shared.rescuableAccounts.some((a) => a.kind === 'orchestrator_config'),
    false,
  );
  const closed = await snapshot(null, 0);
  const leftovers = computeRecovery({ ...closed, steps: [], tokenAccounts: [] }, 0n);
  assert.equal(leftovers.canRescue, false);
  assert.equal(leftovers.canReclaimRent, true);
  assert.equal(leftovers.reclaimableLamports, 1_280_640n + 900_000n);
});
