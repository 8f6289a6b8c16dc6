import type { Address } from '@solana/kit';
import type { AccountReader, ClockReader } from '../chain/types.ts';
import type { Clock } from '../domain/clock.ts';
import type { Transfer } from '../domain/transfer.ts';
import type { Db } from '../store/db.ts';
import type { HopStore } from '../store/hops.ts';
import type { TransferStore } from '../store/transfers.ts';
import { type RecoveryRead, type RoutedTransfer, readRecovery } from './recovery.ts';

export interface OverdueDeps {
  db: Pick<Db, 'transaction'>;
  chain: AccountReader & ClockReader;
  hops: Pick<HopStore, 'markFailed'>;
  transfers: Pick<TransferStore, 'markRecoverable'>;
  programAddress: Address;
  clock: Clock;
}

const iso = (unixSeconds: bigint) => new Date(Number(unixSeconds) * 1000).toISOString();

/**
 * Records what the chain says of a route taken over that can no longer run: one the keeper marked
 * failed (whose worker did not live to record it) becomes `failed`, at any time; past its on-chain
 * deadline, any other that did not settle (still active, flagged, or already being rescued by the
 * source on chain) becomes `recoverable`, with what a rescue returns, whether or not any keeper is
 * alive. A settled route is left to the keeper, which records the hop it sent. Answers the
 * transfer as recorded now, or null when another process changed it first; a route that can still
 * run is answered unchanged.
 */
export async function settleOverdueRoute(
  deps: OverdueDeps,
  transfer: RoutedTransfer,
  read?: RecoveryRead,
): Promise<Transfer | null> {
  if (transfer.status !== 'processing') return transfer;
  const current = read ?? (await readRecovery(deps.chain, deps.programAddress, transfer));
  const route = current.snapshot.route?.data;
  const deadlineAt = route?.deadlineAt ?? transfer.route.schedule?.deadlineAt;
  const overdue = deadlineAt !== undefined && current.chainNow > deadlineAt;
  if (route?.status === 'settled' || (route?.status !== 'failed' && !overdue)) return transfer;
  const now = deps.clock.now();
  const recovery = current.recovery;
  if (route?.status === 'failed') {
    const message = `The route was marked failed on chain; it can no longer execute. The source can rescue everything it holds.`;
    return deps.db.transaction((tx) =>
      deps.hops.markFailed(tx, transfer.id, { lastError: { code: 'MH_031', message }, recovery, now }),
    );
  }
  const message =
    route?.status === 'flagged'
      ? 'Compliance screening flagged this route: it will not execute and its screening deposit is forfeited. The source can rescue its tokens.'
      : `The route passed its deadline (${iso(deadlineAt!)}) before its last hop ran, so it can no longer finish. The source can rescue everything it holds.`;
  return deps.db.transaction((tx) =>
    deps.transfers.markRecoverable(tx, transfer.id, {
      lastError: { code: 'MH_031', message },
      recovery,
      now,
    }),
  );
}
