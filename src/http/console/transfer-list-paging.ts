import type { Owner } from '../../domain/integration.ts';
import type { Transfer } from '../../domain/transfer.ts';
import type { TransferFilters, TransferStore } from '../../store/transfers.ts';

/*
 * The transfers list's pages, read with the API's own listing (`transfers.list`, as
 * `GET /api/v1/transfers` reads it), one page at a time. The pages link to each other by opaque
 * cursors, so that how the listing pages (by offset today) can change here alone: a cursor the
 * page cannot read starts again at the first page.
 */

/** One page of the list and the cursors of its neighbours. */
export interface TransferPage {
  items: Transfer[];
  /** How many transfers the filters match. */
  total: number;
  /** The 1-based position of the page's first item. */
  from: number;
  next: string | null;
  previous: string | null;
}

/** Rows a page shows. */
export const PAGE_SIZE = 25;

const encode = (offset: number) => Buffer.from(`o${offset}`).toString('base64url');

function decode(cursor: string | undefined): number {
  if (!cursor) return 0;
  const match = /^o(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return match ? Number(match[1]) : 0;
}

/** The page of the owner's transfers at `cursor` (the first without one), newest first. */
export async function readTransferPage(
  transfers: Pick<TransferStore, 'list'>,
  owner: Owner,
  filters: TransferFilters,
  cursor: string | undefined,
): Promise<TransferPage> {
  const offset = decode(cursor);
  const page = await transfers.list(owner, filters, { limit: PAGE_SIZE, offset });
  return {
    items: page.items,
    total: page.total,
    from: offset + 1,
    next: offset + page.items.length < page.total ? encode(offset + PAGE_SIZE) : null,
    previous: offset > 0 ? encode(Math.max(0, offset - PAGE_SIZE)) : null,
  };
}
