import type { Owner } from '../domain/integration.ts';
import type { TransferStatus } from '../domain/transfer.ts';
import type { ShownTransfer } from '../domain/transfer-view.ts';
import type { Db } from './db.ts';
import { SHOWN_COLUMNS, type ShownColumns, toShownTransfer } from './transfer-rows.ts';
import { transferTotalSql } from './transfer-totals.ts';

/** What `GET /transfers` filters by; filters combine with AND. */
export interface TransferFilters {
  status?: TransferStatus | undefined;
  fromDate?: Date | undefined;
  toDate?: Date | undefined;
  externalId?: string | undefined;
  supportBundleId?: string | undefined;
}

/** Which page: `limit` transfers after skipping `offset`, counted after `startingAfter` when given. */
export interface TransferPageRequest {
  limit: number;
  offset: number;
  /** A transfer of the owner's: the page continues the listing after it. */
  startingAfter?: number | undefined;
  /**
   * A transfer of the owner's: the page is the `limit` transfers listed just before it (the
   * console's Previous; `hasMore` then says whether others come before the page). Not with
   * `startingAfter` or an offset.
   */
  endingBefore?: number | undefined;
}

export interface TransferPage {
  /** What the listing shows of each transfer. */
  items: ShownTransfer[];
  /** The owner's transfers matching the filters, on every page and after any cursor. */
  total: number;
  /** Whether transfers follow this page. */
  hasMore: boolean;
}

/**
 * A page of the owner's transfers, newest first (`created_at`, then `id`, descending), with the
 * total, or null when its cursor (`startingAfter`, `endingBefore`) is no transfer of the owner's. The total is read in the
 * page's statement, so both are of one moment (and again with the cursor's check when the page is
 * empty). The page continues after its cursor by comparing the pair (`created_at`, `id`), which
 * orders every transfer apart however many share an instant, and reads one index in that order
 * for each filter (migration 0016): its cost is the page, not the rows before it. `offset` is
 * still honoured, at the cost of the rows it skips.
 */
export async function listTransfers(
  db: Db,
  owner: Owner,
  filters: TransferFilters,
  page: TransferPageRequest,
): Promise<TransferPage | null> {
  const listed = binder();
  // Before a transfer, the index is read the other way from it, and the page turned back.
  const backwards = page.endingBefore !== undefined;
  const cursor = page.endingBefore ?? page.startingAfter;
  const anchor = cursor === undefined ? null : anchorSql(owner, cursor, listed.bind);
  const where = [
    ...filterSql(owner, filters, listed.bind),
    ...(anchor ? [`(created_at, id) ${backwards ? '>' : '<'} ${anchor}`] : []),
  ];
  const order = backwards ? 'ASC' : 'DESC';
  const { rows } = await db.query<ShownColumns & { total: string }>(
    `SELECT ${SHOWN_COLUMNS}, ${totalSql(owner, filters, listed.bind)} AS total
       FROM transfers WHERE ${where.join(' AND ')}
      ORDER BY created_at ${order}, id ${order} LIMIT ${listed.bind(page.limit + 1)} OFFSET ${listed.bind(page.offset)}`,
    listed.params,
  );
  if (rows.length > 0) {
    const items = rows.slice(0, page.limit).map(toShownTransfer);
    return {
      items: backwards ? items.reverse() : items,
      total: Number(rows[0]!.total),
      hasMore: rows.length > page.limit,
    };
  }
  const empty = binder();
  const anchored = cursor === undefined ? 'true' : `EXISTS ${anchorSql(owner, cursor, empty.bind)}`;
  const { rows: found } = await db.query<{ total: string; anchored: boolean }>(
    `SELECT ${totalSql(owner, filters, empty.bind)} AS total, ${anchored} AS anchored`,
    empty.params,
  );
  return found[0]!.anchored ? { items: [], total: Number(found[0]!.total), hasMore: false } : null;
}

type Bind = (value: unknown) => string;

/** Parameters of one statement: `bind` adds a value and answers its placeholder. */
function binder(): { params: unknown[]; bind: Bind } {
  const params: unknown[] = [];
  return {
    params,
    bind: (value) => {
      params.push(value);
      return `$${params.length}`;
    },
  };
}

/** The conditions of the owner's transfers that match the filters. */
function filterSql(owner: Owner, filters: TransferFilters, bind: Bind): string[] {
  const conditions = [`integration_id = ${bind(owner.integrationId)}`, `mode = ${bind(owner.mode)}`];
  if (filters.status) conditions.push(`status = ${bind(filters.status)}`);
  if (filters.fromDate) conditions.push(`created_at >= ${bind(filters.fromDate)}`);
  if (filters.toDate) conditions.push(`created_at < ${bind(filters.toDate)}`);
  if (filters.externalId) conditions.push(`external_id = ${bind(filters.externalId)}`);
  if (filters.supportBundleId) conditions.push(`support_bundle_id = ${bind(filters.supportBundleId)}`);
  return conditions;
}

/**
 * The number of the owner's transfers that match the filters. An id filter matches one at most,
 * found by its unique index; anything else is summed from the totals.
 */
function totalSql(owner: Owner, filters: TransferFilters, bind: Bind): string {
  if (filters.externalId || filters.supportBundleId) {
    return `(SELECT count(*) FROM transfers WHERE ${filterSql(owner, filters, bind).join(' AND ')})`;
  }
  return transferTotalSql(
    owner,
    { status: filters.status, from: filters.fromDate, to: filters.toDate },
    bind,
  );
}

/** The cursor's place in the listing's order (no row when it is no transfer of the owner's). */
function anchorSql(owner: Owner, cursor: number, bind: Bind): string {
  return `(SELECT created_at, id FROM transfers
            WHERE id = ${bind(cursor)} AND integration_id = ${bind(owner.integrationId)} AND mode = ${bind(owner.mode)})`;
}
