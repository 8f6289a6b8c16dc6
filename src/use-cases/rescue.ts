import type { Signature } from '@solana/kit';
import { AppError } from '../domain/errors.ts';
import { allowsRecovery, type Transfer } from '../domain/transfer.ts';
import type { Commit } from './commit.ts';
import { dependencyDeadline } from './deadline.ts';
import { settleOverdueRoute } from './overdue.ts';
import {
  matchBundleSignatures,
  ownerOf,
  type RoutedTransfer,
  readRecovery,
  recoveryNotAllowed,
  unique,
} from './recovery.ts';
import { handOutRecoveryBundle, type PreparedRecovery, type RecoveryDeps } from './recovery-bundle.ts';
import { landedProblem } from './signatures.ts';

/*
 * Rescue: the source takes back everything its route holds, once the route failed, became
 * recoverable, or ran past its deadline (recorded recoverable first).
 */

/**
 * The bundle that returns everything the route holds to the source. A route still `executing`
 * past its deadline is recorded `recoverable` first; MH_080 in a phase that allows no rescue,
 * MH_081 when nothing is left (a route found closed is recorded rescued).
 */
export async function prepareRescue<R>(
  deps: RecoveryDeps,
  found: Transfer,
  commit: Commit<PreparedRecovery, R>,
): Promise<R> {
  const options = { signal: dependencyDeadline() };
  const overdueCandidate = found.status === 'processing';
  if (!found.route || !(allowsRecovery('rescue', found.phase) || overdueCandidate)) {
    throw recoveryNotAllowed(found, 'rescue');
  }
  let transfer = found as RoutedTransfer;
  const read = await readRecovery(deps.chain, deps.programAddress, transfer, options);
  if (overdueCandidate) {
    const settled =
      (await settleOverdueRoute(deps, transfer, read)) ??
      (await deps.transfers.get(ownerOf(transfer), transfer.id));
    if (!settled || !allowsRecovery('rescue', settled.phase))
      throw recoveryNotAllowed(settled ?? found, 'rescue');
    transfer = settled as RoutedTransfer;
  }
  if (!read.figures.canRescue) throw await nothingToRescue(deps, transfer, read);
  return handOutRecoveryBundle(deps, transfer, 'rescue', read, commit);
}

/** MH_081; a route gone from the chain was rescued by transactions never reported here, and is recorded so. */
async function nothingToRescue(
  deps: RecoveryDeps,
  transfer: RoutedTransfer,
  read: Awaited<ReturnType<typeof readRecovery>>,
): Promise<AppError> {
  if (read.snapshot.route === null) {
    await deps.db.transaction((tx) =>
      deps.recovery.recordRescue(tx, transfer.id, {
        signatures: [],
        recovery: read.recovery,
        complete: true,
        now: deps.clock.now(),
      }),
    );
  }
  const keeperLeft = read.snapshot.keeper.lamports;
  return new AppError(
    'MH_081',
    keeperLeft > 0n
      ? `Nothing is left to rescue: the route of transfer ${transfer.id} is closed on chain. Its keeper's ${keeperLeft} lamports come back with reclaim-rent.`
      : `Nothing is left to rescue: the route of transfer ${transfer.id} is closed on chain and its keeper holds nothing.`,
    { param: 'transferId' },
  );
}

/**
 * Records broadcast rescue transactions: each signature must be the source's of a transaction of
 * the latest rescue bundle (MH_083) that landed (MH_036) and succeeded (MH_037). Once the route is
 * closed on chain the transfer is `rescued`; before that its `recovery` figures are updated.
 */
export async function confirmRescue<R>(
  deps: RecoveryDeps,
  found: Transfer,
  reported: readonly Signature[],
  commit: Commit<Transfer, R>,
): Promise<R> {
  const options = { signal: dependencyDeadline() };
  if (!found.route || !(allowsRecovery('rescue', found.phase) || found.phase === 'rescued')) {
    throw recoveryNotAllowed(found, 'rescue');
  }
  const transfer = found as RoutedTransfer;
  const signatures = unique(reported);
  const param = (signature: Signature) => `rescueSignatures[${reported.indexOf(signature)}]`;
  const bundle = await deps.recovery.latestBundle(transfer.id, 'rescue');
  if (!bundle) {
    throw new AppError(
      'MH_083',
      `No rescue bundle was prepared for transfer ${transfer.id}: call rescue/prepare, broadcast its transactions, then report their signatures.`,
      { param: 'rescueSignatures' },
    );
  }
  const matches = await matchBundleSignatures(transfer.sourceOwner, bundle.transactions, signatures);
  const stray = matches.indexOf(-1);
  if (stray >= 0) {
    throw new AppError(
      'MH_083',
      `${signatures[stray]} is not the source's signature of a transaction of the latest rescue bundle of transfer ${transfer.id} (prepared at ${bundle.preparedAt.toISOString()}). Report the signatures of that bundle: preparing again replaces the earlier bundle.`,
      { param: param(signatures[stray]!) },
    );
  }
  const problems = await Promise.all(
    signatures.map((signature) => landedProblem(deps.chain, signature, options)),
  );
  const failed = problems.findIndex((problem) => problem !== null);
  if (failed >= 0) {
    const problem = problems[failed]!;
    throw new AppError(problem.code, problem.message, { param: param(signatures[failed]!) });
  }
  const read = await readRecovery(deps.chain, deps.programAddress, transfer, options);
  return commit((tx) =>
    deps.recovery.recordRescue(tx, transfer.id, {
      signatures,
      recovery: read.recovery,
      complete: read.snapshot.route === null,
      now: deps.clock.now(),
    }),
  );
}
