import { createKeyPairSignerFromPrivateKeyBytes, type KeyPairSigner } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { getMarkFailedInstruction } from '../chain/router/instructions.ts';
import type { AccountReader, ClockReader } from '../chain/types.ts';
import { LAMPORTS_PER_SIGNATURE } from '../domain/route.ts';
import { type TermDifference, unquotedRouteMessage } from '../domain/route-terms.ts';
import type { LastError, Recovery, RouteRecord, Transfer } from '../domain/transfer.ts';
import { PlatformTransactionError, sendAndConfirm, type TransactionChain } from '../platform/send.ts';
import type { DeploymentStore } from '../store/deployments.ts';
import { readRoute, recoveryOf } from './route-reads.ts';

export interface KeeperRefundDeps {
  chain: AccountReader & ClockReader & TransactionChain;
  deployments: Pick<DeploymentStore, 'keeperPrivateKey'>;
  programAddress: Parameters<typeof readRoute>[1];
}

/** The transfer's keeper as a signer. */
async function keeperOf(deps: KeeperRefundDeps, transfer: Transfer): Promise<KeyPairSigner> {
  const privateKey = await deps.deployments.keeperPrivateKey(transfer.id);
  return createKeyPairSignerFromPrivateKeyBytes(privateKey!);
}

/**
 * Sends the keeper's lamports back to the source (less the fee of that transaction), when it holds
 * more than the fee. Another process may have returned them since the caller looked: then this
 * transaction cannot pay, and nothing is left to return.
 */
export async function returnKeeperLamports(
  deps: KeeperRefundDeps,
  transfer: Transfer & { route: RouteRecord },
  keeperLamports: bigint,
): Promise<void> {
  if (keeperLamports <= LAMPORTS_PER_SIGNATURE) return;
  const keeper = await keeperOf(deps, transfer);
  try {
    await sendAndConfirm(deps.chain, keeper, [
      getTransferSolInstruction({
        source: keeper,
        destination: transfer.sourceOwner,
        amount: keeperLamports - LAMPORTS_PER_SIGNATURE,
      }),
    ]);
  } catch (error) {
    const left = (await deps.chain.getAccount(keeper.address))?.lamports ?? 0n;
    if (!(error instanceof PlatformTransactionError) || left > LAMPORTS_PER_SIGNATURE) throw error;
  }
}

/**
 * Settles the service's side of a route found at a transfer's address that is not the one quoted
 * (decisions, "A route that is not the one quoted"). It is never run. When it names this transfer's
 * keeper and is still deploying or active, the keeper declares it failed on chain (MarkFailed), so
 * the source may rescue it at once rather than after the deadline its creator chose; then the
 * keeper's lamports go back to the source. Answers what the transfer records: `lastError`
 * (MH_031 naming the first term that differs) and the `recovery` figures as the chain shows them
 * after that. Safe to repeat: each step looks at the chain first.
 */
export async function refuseUnquotedRoute(
  deps: KeeperRefundDeps,
  transfer: Transfer & { route: RouteRecord },
  difference: TermDifference,
): Promise<{ lastError: Omit<LastError, 'at'>; recovery: Recovery }> {
  const before = await readRoute(deps.chain, deps.programAddress, transfer);
  const route = before.route?.data;
  if (
    route?.keeper === transfer.route.keeper &&
    (route.status === 'deploying' || route.status === 'active') &&
    before.keeper.lamports >= LAMPORTS_PER_SIGNATURE
  ) {
    const keeper = await keeperOf(deps, transfer);
    try {
      await sendAndConfirm(deps.chain, keeper, [
        getMarkFailedInstruction({ keeper, route: transfer.route.address }, deps.programAddress),
      ]);
    } catch (error) {
      // Another process declared it failed first, or its creator rescued it meanwhile.
      if (!(error instanceof PlatformTransactionError)) throw error;
    }
  }
  const keeper = await deps.chain.getAccount(transfer.route.keeper);
  await returnKeeperLamports(deps, transfer, keeper?.lamports ?? 0n);
  const [after, clock] = await Promise.all([
    readRoute(deps.chain, deps.programAddress, transfer),
    deps.chain.getClock(),
  ]);
  return {
    lastError: { code: 'MH_031', message: unquotedRouteMessage(difference) },
    recovery: recoveryOf(after, clock.unixTimestamp),
  };
}
