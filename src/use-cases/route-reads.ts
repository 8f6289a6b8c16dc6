import type { Address, EncodedAccount, MaybeEncodedAccount } from '@solana/kit';
import { isNativeMint } from '../chain/router/accounts.ts';
import type { RouteAddresses } from '../chain/router/pda.ts';
import {
  computeRecovery,
  type RecoveryFigures,
  type RouteSnapshot,
  readRouteSnapshot,
} from '../chain/router/recovery.ts';
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

/**
 * The API's `recovery` figures of a route as read on chain, at the chain's unix time `now`: what
 * the source's wallet receives in lamports. On a native-SOL route that includes the wrapped SOL in
 * the route's token accounts, which the recovery bundles deliver unwrapped (src/use-cases/recovery.ts).
 */
export function recoveryOf(snapshot: RouteSnapshot, now: bigint): Recovery {
  const figures = computeRecovery(snapshot, now);
  const native = snapshot.route !== null && isNativeMint(snapshot.route.data.mint);
  const wrapped = new Map(
    snapshot.tokenAccounts.map((account) => [account.address, native ? account.amount : 0n]),
  );
  const accounts = (list: RecoveryFigures['rescuableAccounts']) =>
    list.map(({ kind, address, lamports }) => ({ kind, lamports: lamports + (wrapped.get(address) ?? 0n) }));
  const rescuableAccounts = accounts(figures.rescuableAccounts);
  const total = (list: { lamports: bigint }[]) => list.reduce((sum, account) => sum + account.lamports, 0n);
  return {
    canRescue: figures.canRescue,
    rescuableLamports: total(rescuableAccounts),
    rescuableAccounts,
    canReclaimRent: figures.canReclaimRent,
    reclaimableLamports: total(accounts(figures.reclaimableAccounts)),
  };
}
