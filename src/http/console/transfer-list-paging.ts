import type { Owner } from '../../domain/integration.ts';
import type { ShownTransfer } from '../../domain/transfer-view.ts';
import type { TransferFilters } from '../../store/transfer-listing.ts';
import type { TransferStore } from '../../store/transfers.ts';

/*
 * The transfers list's pages, read with the API's own listing (`transfers.list`, as
 * `GET /api/v1/transfers` reads it), one page at a time by cursor: Next continues after the page's
 * last transfer, Previous ends before its first, so a page costs the same however deep it is. A
 * cursor is opaque to the browser; it also carries the page's position, for "26–50 of 1,000".
 */

/** One page of the list and the cursors of its neighbours. */
export interface TransferPage {
  items: ShownTransfer[];
  /** How many transfers the filters match. */
  total: number;
  /** The 1-based position of the page's first item. */
  from: number;
  next: string | null;
  previous: string | null;
}

/** Rows a page shows. */
export const PAGE_SIZE = 25;

/** Where a page starts: after or before a transfer, and its first item's position. */
interface Cursor {
  direction: 'after' | 'before';
  id: number;
  from: number;
}

const encode = ({ direction, id, from }: Cursor) =>
  Buffer.from(`${direction === 'after' ? 'a' : 'b'}${id}.${from}`).toString('base64url');

/** The cursor, or none (the first page) for a missing or unreadable one. */
function decode(cursor: string | undefined): Cursor | undefined {
  if (!cursor) return undefined;
  const match = /^([ab])(\d{1,15})\.(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) return undefined;
  return { direction: match[1] === 'a' ? 'after' : 'before', id: Number(match[2]), from: Number(match[3]) };
}

/**
 * The page of the owner's transfers at `cursor` (the first without one), newest first. A cursor
 * whose transfer is not the owner's, or past which nothing is left, starts again at the first page.
 */
export async function readTransferPage(
  transfers: Pick<TransferStore, 'list'>,
  owner: Owner,
  filters: TransferFilters,
  cursor: string | undefined,
): Promise<TransferPage> {
  const at = decode(cursor);
  const request = {
    limit: PAGE_SIZE,
    offset: 0,
    startingAfter: at?.direction === 'after' ? at.id : undefined,
    endingBefore: at?.direction === 'before' ? at.id : undefined,
  };
  const page = (await transfers.list(owner, filters, request)) ?? (at ? null : undefined);
  if (page === null) return readTransferPage(transfers, owner, filters, undefined);
  if (page === undefined) throw new Error('the first page of a listing has no cursor to miss');
  // Nothing left past the cursor (its neighbours changed status): the first page, not a dead end.
  if (at && page.items.length === 0) return readTransferPage(transfers, owner, filters, undefined);
  const first = page.items[0];
  const last = page.items.at(-1);
  const before = at?.direction === 'before';
  // Back from a page the position is counted down; with nothing before it, the page is the first.
  const from = !before ? (at?.from ?? 1) : page.hasMore ? Math.max(1, at.from - page.items.length) : 1;
  const moreAfter = before ? true : page.hasMore;
  const moreBefore = before ? page.hasMore : at !== undefined;
  return {
    items: page.items,
    total: page.total,
    from,
    next:
      moreAfter && last ? encode({ direction: 'after', id: last.id, from: from + page.items.length }) : null,
    previous: moreBefore && first ? encode({ direction: 'before', id: first.id, from }) : null,
  };
}
