import type { Sql } from './db.ts';

/**
 * The exact number of rows a paged query matches. Pages are read with `count(*) OVER ()`, which
 * gives it on every row; a page past the end has no row to carry it, so it is counted apart.
 */
export async function pageTotal(
  sql: Sql,
  rows: readonly { total: string }[],
  offset: number,
  count: { from: string; where: string; params: readonly unknown[] },
): Promise<number> {
  if (rows[0]) return Number(rows[0].total);
  if (offset === 0) return 0;
  const { rows: counted } = await sql.query<{ total: string }>(
    `SELECT count(*) AS total FROM ${count.from} WHERE ${count.where}`,
    count.params,
  );
  return Number(counted[0]!.total);
}
