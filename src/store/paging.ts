import type { Row, Sql } from './db.ts';

/** A listing's query, split so that its page and its total can be read apart. */
export interface Listing {
  select: string;
  from: string;
  where: string;
  orderBy: string;
  params: readonly unknown[];
}

/**
 * One page of a listing and the exact number of rows its filters match. The page is read with its
 * LIMIT alone, so an index in the listing's order serves it without touching every match, and the
 * total is counted by its own statement at the same time. (`count(*) OVER ()` on the page query
 * would make PostgreSQL read and sort every matching row for every page.)
 */
export async function readPage<R extends Row>(
  sql: Pick<Sql, 'query'>,
  listing: Listing,
  page: { limit: number; offset: number },
): Promise<{ rows: R[]; total: number }> {
  const next = listing.params.length;
  const [paged, counted] = await Promise.all([
    sql.query<R>(
      `SELECT ${listing.select} FROM ${listing.from} WHERE ${listing.where}
        ORDER BY ${listing.orderBy} LIMIT $${next + 1} OFFSET $${next + 2}`,
      [...listing.params, page.limit, page.offset],
    ),
    sql.query<{ total: string }>(
      `SELECT count(*) AS total FROM ${listing.from} WHERE ${listing.where}`,
      listing.params,
    ),
  ]);
  return { rows: paged.rows, total: Number(counted.rows[0]!.total) };
}
