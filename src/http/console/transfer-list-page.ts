import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { TRANSFER_STATUSES } from '../../domain/transfer.ts';
import type { ShownTransfer } from '../../domain/transfer-view.ts';
import type { TransferFilters } from '../../store/transfer-listing.ts';
import type { TransferStore } from '../../store/transfers.ts';
import { pageData } from './layout.ts';
import { contentVersion, isRefresh, isUnchanged, refreshUrl } from './live.ts';
import { assetName, isLive, statusLabel, statusTone, utc } from './present.ts';
import { readTransferPage } from './transfer-list-paging.ts';

const DAY_MS = 24 * 3600_000;

/** A form field left empty is a filter not set; a field sent twice counts once. */
const formValue = (value: unknown) => {
  const first = Array.isArray(value) ? value[0] : value;
  return first === '' ? undefined : first;
};
const optional = <T extends z.ZodType>(schema: T) => z.preprocess(formValue, schema.optional());
const date = z.iso.date({ error: 'must be a date (YYYY-MM-DD)' });

/** The list's filters: the API's (`GET /api/v1/transfers`), with whole UTC days for the dates. */
const listQuery = z.object({
  status: optional(z.enum(TRANSFER_STATUSES, { error: 'must be one of the statuses listed' })),
  fromDate: optional(date),
  toDate: optional(date),
  externalId: optional(z.string().max(128)),
  supportBundleId: optional(z.string().max(32)),
  cursor: optional(z.string().max(64)),
});

type ListQuery = z.infer<typeof listQuery>;

/** The form's dates as the API's filters: from the first day's start to the last day's end. */
function filtersOf(query: ListQuery): TransferFilters {
  return {
    status: query.status,
    externalId: query.externalId,
    supportBundleId: query.supportBundleId,
    fromDate: query.fromDate ? new Date(`${query.fromDate}T00:00:00Z`) : undefined,
    toDate: query.toDate ? new Date(Date.parse(`${query.toDate}T00:00:00Z`) + DAY_MS) : undefined,
  };
}

/** One row of the list. */
function row(transfer: ShownTransfer) {
  return {
    id: transfer.id,
    href: `/dashboard/transfers/${transfer.id}`,
    created: utc(transfer.createdAt),
    amount: `${transfer.amountTokens} ${assetName(transfer.tokenMint, transfer.tokenSymbol)}`,
    status: statusLabel(transfer.status),
    tone: statusTone(transfer.status),
    phase: transfer.phase,
    progress: `${transfer.hopsCompleted} of ${transfer.hops}`,
    externalId: transfer.externalId,
    supportBundleId: transfer.supportBundleId,
  };
}

/** The link to the list with the same filters at another cursor. */
function linkTo(query: ListQuery, cursor: string | null) {
  if (!cursor) return null;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...query, cursor })) if (value) params.set(name, value);
  return `/dashboard/transfers?${params}`;
}

/**
 * `GET /dashboard/transfers`: the signed-in key's transfers, newest first, with the API's filters
 * and Next/Previous pages. While a listed transfer is live its rows refresh every 2 s (htmx asks
 * the same URL for the rows alone, src/http/console/live.ts).
 */
export async function transferListPage(
  app: FastifyInstance,
  deps: { transfers: Pick<TransferStore, 'list'> },
) {
  app.get('/transfers', async (request, reply) => {
    const caller = request.consoleCaller;
    const parsed = listQuery.safeParse(request.query);
    const query: ListQuery = parsed.success ? parsed.data : {};
    const error = parsed.success
      ? undefined
      : parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`).join('; ');
    const page = parsed.success
      ? await readTransferPage(deps.transfers, caller.auth.owner, filtersOf(query), query.cursor)
      : null;
    const rows = (page?.items ?? []).map(row);
    const live = (page?.items ?? []).some((transfer) => isLive(transfer.status));
    const version = contentVersion({ rows, live });
    reply.header('vary', 'hx-request').header('cache-control', 'no-store');
    if (isUnchanged(request, version)) return reply.code(204).send();
    const data = {
      title: 'Transfers',
      rows,
      live,
      refreshUrl: refreshUrl(request, version),
      filters: {
        ...query,
        statuses: TRANSFER_STATUSES.map((status) => ({ status, label: statusLabel(status) })),
      },
      error,
      range: page && page.total > 0 ? `${page.from}–${page.from + rows.length - 1} of ${page.total}` : null,
      next: page ? linkTo(query, page.next) : null,
      previous: page ? linkTo(query, page.previous) : null,
      filtered: Object.values(filtersOf(query)).some((value) => value !== undefined),
    };
    if (isRefresh(request)) return reply.view('transfer-rows', data);
    return reply.code(parsed.success ? 200 : 400).view('transfers', pageData(caller, data, 'transfers'));
  });
}
