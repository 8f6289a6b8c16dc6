import type { Transfer } from '../domain/transfer.ts';
import { type OverdueDeps, settleOverdueRoute } from './overdue.ts';
import { type ReconcileDeps, reconcileDeployment } from './reconcile.ts';
import type { RoutedTransfer } from './recovery.ts';

/**
 * The transfer as the chain shows it now, whoever asks (decisions: phase is derived from on-chain
 * state): a deployment is reconciled (taken over, refused, expired or recoverable), a route taken
 * over that can no longer run is recorded `failed` or `recoverable`. Any other transfer is answered
 * as it is.
 */
export async function refreshFromChain(
  deps: ReconcileDeps & OverdueDeps,
  transfer: Transfer,
  reload: () => Promise<Transfer>,
): Promise<Transfer> {
  if (transfer.status === 'processing' && transfer.route) {
    return (await settleOverdueRoute(deps, transfer as RoutedTransfer)) ?? reload();
  }
  return reconcileDeployment(deps, transfer);
}
