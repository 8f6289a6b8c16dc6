import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { TransferView } from '../../domain/transfer-view.ts';
import { errorPage } from './errors.ts';
import { pageData } from './layout.ts';
import { contentVersion, isRefresh, isUnchanged, refreshUrl } from './live.ts';
import {
  accountKindLabel,
  assetName,
  duration,
  errorMeaning,
  isLive,
  lateness,
  sol,
  statusLabel,
  statusTone,
  utc,
} from './present.ts';
import type { TransferDetails, TransferDetailsReader } from './transfer-details.ts';

const params = z.object({ transferId: z.string().regex(/^[1-9]\d{0,14}$/) });

/** The page's figures, formatted: what a template only prints. */
function present(details: TransferDetails) {
  const { transfer } = details;
  return {
    ...details,
    live: isLive(transfer.status),
    status: statusLabel(transfer.status),
    tone: statusTone(transfer.status),
    asset: assetName(transfer.tokenMint, transfer.tokenSymbol),
    created: utc(new Date(transfer.createdAt)),
    completed: transfer.completedAt ? utc(new Date(transfer.completedAt)) : null,
    expires: utc(new Date(transfer.expiresAt)),
    flatFee: transfer.totalFlatFeeLamports === null ? null : sol(transfer.totalFlatFeeLamports),
    arrival: duration(transfer.arrivalSeconds),
    lastError: transfer.lastError
      ? {
          code: transfer.lastError.code,
          meaning: errorMeaning(transfer.lastError.code),
          message: transfer.lastError.message,
          at: utc(new Date(transfer.lastError.at)),
        }
      : null,
    recovery: recoveryFigures(transfer),
    hops: details.hops.map((hop) => ({
      ...hop,
      due: hop.dueAt ? utc(hop.dueAt) : null,
      landed: hop.landedAt ? utc(hop.landedAt) : null,
      late: hop.lateSeconds === null ? null : lateness(hop.lateSeconds),
    })),
    timeline: details.timeline.map((entry) => ({ ...entry, when: utc(entry.at) })),
  };
}

/** The recovery figures in words, when the API reports them. */
function recoveryFigures(transfer: TransferView) {
  const recovery = transfer.recovery;
  if (!recovery) return null;
  return {
    canRescue: recovery.canRescue,
    rescuable: sol(recovery.rescuableLamports),
    accounts: recovery.rescuableAccounts.map((account) => ({
      kind: accountKindLabel(account.kind),
      amount: sol(account.lamports),
    })),
    canReclaimRent: recovery.canReclaimRent,
    reclaimable: sol(recovery.reclaimableLamports),
  };
}

/**
 * `GET /dashboard/transfers/{id}`: a transfer's page. While the transfer is live, htmx asks the
 * same URL every 2 s for its live part alone (src/http/console/live.ts), and stops once the
 * answer shows it settled.
 * Another integration's or mode's transfer is as unknown as a missing one (404).
 */
export async function transferPage(app: FastifyInstance, deps: { details: TransferDetailsReader }) {
  app.get('/transfers/:transferId', async (request, reply) => {
    const caller = request.consoleCaller;
    const parsed = params.safeParse(request.params);
    const id = parsed.success ? Number(parsed.data.transferId) : null;
    const details =
      id === null
        ? null
        : await deps.details.read(caller.auth.owner, id, (error) =>
            request.log.warn({ err: error, transferId: id }, 'console: a chain read failed'),
          );
    if (!details) {
      return errorPage(request, reply, 404, {
        title: 'Transfer not found',
        message: `There is no transfer${id === null ? ' at this address' : ` with id ${id}`} in this integration's ${caller.auth.mode} data.`,
      });
    }
    const shown = { title: `Transfer ${details.transfer.id}`, ...present(details) };
    const version = contentVersion(shown);
    reply.header('vary', 'hx-request').header('cache-control', 'no-store');
    if (isUnchanged(request, version)) return reply.code(204).send();
    const data = { ...shown, refreshUrl: refreshUrl(request, version) };
    if (isRefresh(request)) return reply.view('transfer-live', data);
    return reply.view('transfer', pageData(caller, data, 'transfers'));
  });
}
