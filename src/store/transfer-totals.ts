import type { Owner } from '../domain/integration.ts';
import type { TransferStatus } from '../domain/transfer.ts';
import type { Db } from './db.ts';
import { withRollUpLock } from './roll-up-lock.ts';

/*
 * Exact numbers of an owner's transfers without counting them: totals per status and per UTC day
 * of creation, which a trigger keeps by appending each change to `transfer_total_changes` and a
 * roll-up folds into `transfer_totals` and `transfer_day_totals` (migration 0016). A figure is
 * the rolled-up totals plus the changes not yet folded, read in one statement, so it is exact
 * whenever it is read, rolled up or not.
 */

/** Which transfers to count: one status or all, created within [from, to) (an open end is unbounded). */
export interface TotalScope {
  status?: TransferStatus | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

const DAY_MS = 86_400_000;
/** Arbitrary constant: the advisory lock a roll-up holds, so that one runs at a time. */
const ROLL_UP_LOCK_KEY = 4_271_003_012;

/**
 * An SQL expression for the number of the owner's transfers in `scope`, its parameters bound with
 * `bind` (which answers each one's placeholder), to be read in the statement that needs it. The
 * whole UTC days of the window are summed from the totals (one row per day and status at most),
 * and only the part of a day at either end is counted from the transfers themselves, through the
 * listing's indexes.
 */
export function transferTotalSql(owner: Owner, scope: TotalScope, bind: (value: unknown) => string): string {
  const ownerAndStatus = [
    `integration_id = ${bind(owner.integrationId)}`,
    `mode = ${bind(owner.mode)}`,
    ...(scope.status ? [`status = ${bind(scope.status)}`] : []),
  ].join(' AND ');
  const { days, partial } = splitByDay(scope.from, scope.to);
  const terms: string[] = [];
  if (days && !days.from && !days.to) {
    terms.push(
      `(SELECT coalesce(sum(transfers), 0) FROM transfer_totals WHERE ${ownerAndStatus})`,
      `(SELECT coalesce(sum(change), 0) FROM transfer_total_changes WHERE ${ownerAndStatus})`,
    );
  } else if (days) {
    const within = [
      ownerAndStatus,
      ...(days.from ? [`created_on >= ${bind(isoDay(days.from))}::date`] : []),
      ...(days.to ? [`created_on < ${bind(isoDay(days.to))}::date`] : []),
    ].join(' AND ');
    terms.push(
      `(SELECT coalesce(sum(transfers), 0) FROM transfer_day_totals WHERE ${within})`,
      `(SELECT coalesce(sum(change), 0) FROM transfer_total_changes WHERE ${within})`,
    );
  }
  for (const window of partial) {
    const within = [
      ownerAndStatus,
      ...(window.from ? [`created_at >= ${bind(window.from)}`] : []),
      ...(window.to ? [`created_at < ${bind(window.to)}`] : []),
    ].join(' AND ');
    terms.push(`(SELECT count(*) FROM transfers WHERE ${within})`);
  }
  return `(${terms.join(' + ')})`;
}

/**
 * A window of creation times cut at UTC midnights: the whole days in it (null when it holds none)
 * and the parts of a day at its ends. A window shorter than two days is left in one part.
 */
function splitByDay(
  from: Date | undefined,
  to: Date | undefined,
): { days: { from?: Date; to?: Date } | null; partial: { from?: Date; to?: Date }[] } {
  const first = from && new Date(Math.ceil(from.getTime() / DAY_MS) * DAY_MS);
  const end = to && new Date(Math.floor(to.getTime() / DAY_MS) * DAY_MS);
  if (first && end && first >= end) return { days: null, partial: [{ from, to }] };
  const partial: { from?: Date; to?: Date }[] = [];
  if (from && first && first > from) partial.push({ from, to: first });
  if (to && end && end < to) partial.push({ from: end, to });
  return { days: { ...(first ? { from: first } : {}), ...(end ? { to: end } : {}) }, partial };
}

const isoDay = (day: Date) => day.toISOString().slice(0, 10);

/** The roll-up of transfer totals (src/workers/transfer-totals.ts). */
export function createTransferTotalsStore(db: Db) {
  return {
    /**
     * Folds up to `batchSize` of the oldest changes into the totals and deletes the days it
     * emptied; answers how many it folded (0 as well when another roll-up is running).
     */
    rollUp: (batchSize: number) => rollUp(db, batchSize),
  };
}

export type TransferTotalsStore = ReturnType<typeof createTransferTotalsStore>;

function rollUp(db: Db, batchSize: number): Promise<number> {
  return withRollUpLock(db, ROLL_UP_LOCK_KEY, async (tx) => {
    // Rows are upserted in key order, so that the locks they take never cross another writer's.
    const { rows } = await tx.query<{ folded: string }>(
      `WITH folded AS (
         DELETE FROM transfer_total_changes
          WHERE id IN (SELECT id FROM transfer_total_changes ORDER BY id LIMIT $1)
         RETURNING integration_id, mode, status, created_on, change
       ), by_day AS (
         SELECT integration_id, mode, status, created_on, sum(change)::bigint AS change
           FROM folded GROUP BY integration_id, mode, status, created_on
       ), days AS (
         INSERT INTO transfer_day_totals AS total (integration_id, mode, status, created_on, transfers)
         SELECT integration_id, mode, status, created_on, change FROM by_day WHERE change <> 0
          ORDER BY integration_id, mode, status, created_on
         ON CONFLICT (integration_id, mode, status, created_on)
         DO UPDATE SET transfers = total.transfers + excluded.transfers
       ), statuses AS (
         INSERT INTO transfer_totals AS total (integration_id, mode, status, transfers)
         SELECT integration_id, mode, status, sum(change) FROM by_day GROUP BY integration_id, mode, status
         HAVING sum(change) <> 0 ORDER BY integration_id, mode, status
         ON CONFLICT (integration_id, mode, status) DO UPDATE SET transfers = total.transfers + excluded.transfers
       )
       SELECT count(*) AS folded FROM folded`,
      [batchSize],
    );
    await tx.query('DELETE FROM transfer_day_totals WHERE transfers = 0');
    return Number(rows[0]!.folded);
  });
}
