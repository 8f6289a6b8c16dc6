import type { Address, EncodedAccount, MaybeEncodedAccount } from '@solana/kit';
import type { RouteAddresses } from '../chain/router/pda.ts';
import { computeRecovery, type RouteSnapshot, readRouteSnapshot } from '../chain/router/recovery.ts';
import type { AccountReader, CallOptions } from '../chain/types.ts';
import type { Recovery, RouteRecord, Transfer } from '../domain/transfer.ts';

/** The chain's answers for some addresses as kit's "maybe" accounts, in order. */
export async function readMaybeAccounts(
  chain: AccountReader,
  addresses: readonly Address[],
  options: CallOptions = {},
): Promise<MaybeEncodedAccount[]> {
  const accounts = await chain.getAccounts(addresses, options);
  return accounts.map(
    (account: EncodedAccount | null, index): MaybeEncodedAccount =>
      account
        ? { ...account, data: Uint8Array.from(account.data), exists: true }
        : { address: addresses[index]!, exists: false },
  );
}

/** Reads every account of a transfer's route: route, custody, intermediates, steps, orchestrator, keeper. */
export function readRoute(
  chain: AccountReader,
  programAddress: Address,
  transfer: Transfer & { route: RouteRecord },
  options: CallOptions = {},
  /** The route's addresses, when the caller derived them already. */
  addresses?: RouteAddresses,
): Promise<RouteSnapshot> {
  return readRouteSnapshot(
    (list) => readMaybeAccounts(chain, list, options),
    {
      source: transfer.sourceOwner,
      routeId: BigInt(transfer.id),
      hopCount: transfer.hops,
      keeper: transfer.route.keeper,
      addresses,
    },
    programAddress,
  );
}

/** The API's `recovery` figures of a route as read on chain, at the chain's unix time `now`. */
export function recoveryOf(snapshot: RouteSnapshot, now: bigint): Recovery {
  const figures = computeRecovery(snapshot, now);
  return {
    canRescue: figures.canRescue,
    rescuableLamports: figures.rescuableLamports,
    rescuableAccounts: figures.rescuableAccounts.map(({ kind, lamports }) => ({ kind, lamports })),
    canReclaimRent: figures.canReclaimRent,
    reclaimableLamports: figures.reclaimableLamports,
  };
}
