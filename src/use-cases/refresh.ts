import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../domain/errors.ts';
import type { Transfer } from '../domain/transfer.ts';
import type { TransferStore } from '../store/transfers.ts';
import { type OverdueDeps, settleOverdueRoute } from './overdue.ts';
import { type ReconcileDeps, reconcileDeployment } from './reconcile.ts';
import { ownerOf, type RoutedTransfer } from './recovery.ts';

export type RefreshDeps = ReconcileDeps &
  OverdueDeps & {
    transfers: Pick<TransferStore, 'get' | 'markRecoverable'>;
  };

/** The transfer as stored now. */
const reload = async (deps: RefreshDeps, transfer: Transfer) =>
  (await deps.transfers.get(ownerOf(transfer), transfer.id)) ?? transfer;

/**
 * The transfer as the chain shows it now, whoever asks (decisions: phase is derived from on-chain
 * state): a deployment is reconciled (taken over, refused, expired or recoverable), a route taken
 * over that can no longer run is recorded `failed` or `recoverable`. Any other transfer is answered
 * as it is.
 */
export async function refreshFromChain(deps: RefreshDeps, transfer: Transfer): Promise<Transfer> {
  if (transfer.status === 'processing' && transfer.route) {
    return (await settleOverdueRoute(deps, transfer as RoutedTransfer)) ?? reload(deps, transfer);
  }
  return reconcileDeployment(deps, transfer);
}

/** Statuses a transfer reaches once its deployment is over, one way or another. */
const deploymentOver = (transfer: Transfer) =>
  transfer.status !== 'quote' && transfer.status !== 'awaiting_signature';

/**
 * Waits up to `timeoutSeconds` for the route to be deployed and funded on chain, looking every
 * `pollMs`, and answers the transfer once its deployment is over; MH_035 before a prepare, MH_032
 * when the time ran out. Between looks at the chain nothing is held: no database connection, no
 * lock.
 */
export async function awaitDeployment(
  deps: RefreshDeps,
  found: Transfer,
  wait: { timeoutSeconds: number; pollMs: number },
): Promise<Transfer> {
  const deadline = Date.now() + wait.timeoutSeconds * 1000;
  if (found.status === 'quote') {
    throw new AppError('MH_035', `Transfer ${found.id} has no prepared bundle yet: call prepare first.`, {
      param: 'transferId',
    });
  }
  let transfer = found;
  for (;;) {
    transfer = await reconcileDeployment(deps, transfer);
    if (deploymentOver(transfer)) return transfer;
    const left = deadline - Date.now();
    if (left <= 0) break;
    await sleep(Math.min(wait.pollMs, left));
    transfer = await reload(deps, transfer);
  }
  throw new AppError(
    'MH_032',
    `The route of transfer ${transfer.id} was not deployed and funded within ${wait.timeoutSeconds} s. Broadcast the prepared bundle, then call again.`,
    { param: 'timeoutSeconds' },
  );
}
