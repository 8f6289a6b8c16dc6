import type { Signature } from '@solana/kit';
import { AppError } from '../domain/errors.ts';
import { allowsRecovery, type Transfer } from '../domain/transfer.ts';
import type { Commit } from './commit.ts';
import { dependencyDeadline } from './deadline.ts';
import {
  matchBundleSignatures,
  type RoutedTransfer,
  readRecovery,
  recoveryNotAllowed,
  unique,
} from './recovery.ts';
import { handOutRecoveryBundle, type PreparedRecovery, type RecoveryDeps } from './recovery-bundle.ts';
import { landedProblem } from './signatures.ts';

/*
 * Rent reclaim: once a route settled (or after its rescue, for what reached it since), the source
 * takes back the rent of every account the route still has and the keeper's leftover.
 */

/** What a reclaim confirm says of each reported signature. */
export interface ReclaimOutcome {
  confirmed: Signature[];
  failed: { signature: Signature; error: string }[];
}

/** The transfer when its phase allows a reclaim, else MH_080. */
function reclaimable(transfer: Transfer): RoutedTransfer {
  if (!transfer.route || !allowsRecovery('reclaim', transfer.phase))
    throw recoveryNotAllowed(transfer, 'reclaim');
  return transfer as RoutedTransfer;
}

/** The bundle that closes what the route still has; MH_082 when nothing is left. */
export async function prepareReclaim<R>(
  deps: RecoveryDeps,
  found: Transfer,
  commit: Commit<PreparedRecovery, R>,
): Promise<R> {
  const transfer = reclaimable(found);
  const read = await readRecovery(deps.chain, deps.programAddress, transfer, {
    signal: dependencyDeadline(),
  });
  if (!read.figures.canReclaimRent) {
    throw new AppError(
      'MH_082',
      `Nothing is left to reclaim: every account of the route of transfer ${transfer.id} is closed and its keeper holds nothing.`,
      { param: 'transferId' },
    );
  }
  return handOutRecoveryBundle(deps, transfer, 'reclaim', read, commit);
}

/**
 * Says of each reported signature whether it counts: the source's of a transaction of the latest
 * reclaim bundle (MH_083) that landed (MH_036) and succeeded (MH_037). The ones that count are
 * recorded with the figures read now; once nothing is left, a settled transfer is `reclaimed`.
 */
export async function confirmReclaim(
  deps: RecoveryDeps,
  found: Transfer,
  reported: readonly Signature[],
  commit: Commit<ReclaimOutcome>,
): Promise<ReclaimOutcome> {
  const options = { signal: dependencyDeadline() };
  const transfer = reclaimable(found);
  const signatures = unique(reported);
  const bundle = await deps.recovery.latestBundle(transfer.id, 'reclaim');
  const matches = bundle
    ? await matchBundleSignatures(transfer.sourceOwner, bundle.transactions, signatures)
    : signatures.map(() => -1);
  const outcomes = await Promise.all(
    signatures.map(async (signature, index): Promise<{ signature: Signature; error: string | null }> => {
      if (matches[index]! < 0) {
        return {
          signature,
          error: bundle
            ? `MH_083: ${signature} is not the source's signature of a transaction of the latest reclaim bundle of transfer ${transfer.id} (prepared at ${bundle.preparedAt.toISOString()}).`
            : `MH_083: no reclaim bundle was prepared for transfer ${transfer.id}.`,
        };
      }
      const problem = await landedProblem(deps.chain, signature, options);
      return { signature, error: problem && `${problem.code}: ${problem.message}` };
    }),
  );
  const confirmed = outcomes.flatMap(({ signature, error }) => (error === null ? [signature] : []));
  const failed = outcomes.flatMap(({ signature, error }) => (error === null ? [] : [{ signature, error }]));
  if (confirmed.length === 0) return { confirmed, failed };
  const read = await readRecovery(deps.chain, deps.programAddress, transfer, options);
  return commit(async (tx) => {
    await deps.recovery.recordReclaim(tx, transfer.id, {
      signatures: confirmed,
      recovery: read.recovery,
      complete: read.figures.reclaimableLamports === 0n,
      now: deps.clock.now(),
    });
    return { confirmed, failed };
  });
}
