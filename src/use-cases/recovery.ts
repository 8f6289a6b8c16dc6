import {
  type Address,
  getBase58Encoder,
  getBase64Encoder,
  getPublicKeyFromAddress,
  getTransactionDecoder,
  type Signature,
  signatureBytes,
  verifySignature,
} from '@solana/kit';
import { findRouteAddresses, type RouteAddresses } from '../chain/router/pda.ts';
import { computeRecovery, type RecoveryFigures, type RouteSnapshot } from '../chain/router/recovery.ts';
import type { AccountReader, CallOptions, ClockReader } from '../chain/types.ts';
import { AppError } from '../domain/errors.ts';
import type { Owner } from '../domain/integration.ts';
import {
  type Recovery,
  type RecoveryKind,
  type RouteRecord,
  reportsRecovery,
  type Transfer,
} from '../domain/transfer.ts';
import { dependencyDeadline } from './deadline.ts';
import { readRoute, recoveryOf } from './route-reads.ts';

/*
 * Rescue and rent reclaim of a transfer's route through the API: what the chain holds now, the
 * bundle the source signs (the service co-signs the keeper's sweep), and the checks a confirm makes
 * of the signatures it reports.
 */

/** A transfer whose route was assigned by a prepare. */
export type RoutedTransfer = Transfer & { route: RouteRecord };

/** A route's accounts as read now, on the chain's clock, with what a rescue or reclaim would return. */
export interface RecoveryRead {
  addresses: RouteAddresses;
  snapshot: RouteSnapshot;
  /** The chain's unix time of the read. */
  chainNow: bigint;
  figures: RecoveryFigures;
  /** The API's `recovery` figures. */
  recovery: Recovery;
}

/** Reads a transfer's route and keeper now and computes what a recovery would return. */
export async function readRecovery(
  chain: AccountReader & ClockReader,
  programAddress: Address,
  transfer: RoutedTransfer,
  options: CallOptions = {},
): Promise<RecoveryRead> {
  const addresses = await findRouteAddresses(
    { source: transfer.sourceOwner, routeId: BigInt(transfer.id), hopCount: transfer.hops },
    programAddress,
  );
  const [snapshot, clock] = await Promise.all([
    readRoute(chain, programAddress, transfer, options, addresses),
    chain.getClock(options),
  ]);
  return {
    addresses,
    snapshot,
    chainNow: clock.unixTimestamp,
    figures: computeRecovery(snapshot, clock.unixTimestamp),
    recovery: recoveryOf(snapshot, clock.unixTimestamp),
  };
}

/**
 * The transfer as a read answers it: in the phases that report `recovery`, its figures are read
 * from the chain now (anyone may send lamports or tokens to a route account or a keeper, and the
 * figures are what a rescue or a reclaim would return now).
 */
export async function withCurrentRecovery(
  deps: { chain: AccountReader & ClockReader; programAddress: Address },
  transfer: Transfer,
): Promise<Transfer> {
  if (!transfer.route || !reportsRecovery(transfer.phase)) return transfer;
  const { recovery } = await readRecovery(deps.chain, deps.programAddress, transfer as RoutedTransfer, {
    signal: dependencyDeadline(),
  });
  return { ...transfer, recovery };
}

/**
 * {@link withCurrentRecovery} for a read that must answer even when the chain cannot: the stored
 * figures then, after `onChainFailure` is told why.
 */
export async function withCurrentRecoveryOrStored(
  deps: { chain: AccountReader & ClockReader; programAddress: Address },
  transfer: Transfer,
  onChainFailure: (error: unknown) => void,
): Promise<Transfer> {
  try {
    return await withCurrentRecovery(deps, transfer);
  } catch (error) {
    onChainFailure(error);
    return transfer;
  }
}

/**
 * For each signature, the index of the bundle transaction whose message the source signed with
 * it, or -1: a signature proves which message it signs, so a confirm can tell a transaction of the
 * latest bundle from any other (another transfer's, an earlier bundle's) before asking the chain.
 */
export async function matchBundleSignatures(
  source: Address,
  transactions: readonly string[],
  signatures: readonly Signature[],
): Promise<number[]> {
  const key = await getPublicKeyFromAddress(source);
  const decoder = getTransactionDecoder();
  const base64 = getBase64Encoder();
  const base58 = getBase58Encoder();
  const messages = transactions.map((wire) => decoder.decode(base64.encode(wire)).messageBytes);
  return Promise.all(
    signatures.map(async (signature) => {
      const bytes = signatureBytes(base58.encode(signature));
      for (const [index, message] of messages.entries()) {
        if (await verifySignature(key, bytes, message)) return index;
      }
      return -1;
    }),
  );
}

const PHASE_HINTS: Partial<Record<Transfer['phase'], Record<RecoveryKind, string>>> = {
  executing: {
    rescue: 'its route runs until it fails or passes its deadline; rescue is possible then',
    reclaim: 'its route has not settled yet',
  },
  settled: { rescue: 'it was delivered; reclaim its rent with reclaim-rent instead', reclaim: '' },
  reclaimed: { rescue: 'it was delivered and its rent reclaimed', reclaim: '' },
  rescued: {
    rescue: 'it was rescued already; what reaches its accounts since comes back with reclaim-rent',
    reclaim: '',
  },
  failed: { rescue: '', reclaim: 'its route did not settle; rescue it instead' },
  recoverable: { rescue: '', reclaim: 'its route did not settle; rescue it instead' },
};

/** MH_080: the transfer's phase does not allow this recovery operation; says what does. */
export function recoveryNotAllowed(transfer: Transfer, kind: RecoveryKind): AppError {
  const allowed =
    kind === 'rescue'
      ? 'rescue is allowed in phases failed and recoverable'
      : 'rent is reclaimed in phases settled, rescued and reclaimed';
  const hint =
    PHASE_HINTS[transfer.phase]?.[kind] ??
    (transfer.phase === 'expired'
      ? 'nothing of its route was left on chain'
      : 'its route is still being deployed; an abandoned deployment becomes recoverable 10 minutes after expiresAt');
  return new AppError(
    'MH_080',
    `Transfer ${transfer.id} is in phase ${transfer.phase}: ${allowed}${hint ? ` (${hint})` : ''}.`,
    { param: 'transferId' },
  );
}

/** The owner of a transfer, to read it again as its owner would. */
export const ownerOf = (transfer: Transfer): Owner => ({
  integrationId: transfer.integrationId,
  mode: transfer.mode,
});

/** Unique signatures in the order given: a signature reported twice counts once. */
export const unique = (signatures: readonly Signature[]) => [...new Set(signatures)];
