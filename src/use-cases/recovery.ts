import {
  type Address,
  createKeyPairSignerFromPrivateKeyBytes,
  createNoopSigner,
  generateKeyPairSigner,
  getBase58Encoder,
  getBase64Encoder,
  getPublicKeyFromAddress,
  getTransactionDecoder,
  type Instruction,
  type Signature,
  signatureBytes,
  verifySignature,
} from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCloseAccountInstruction,
  getInitializeAccount3Instruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { isNativeMint, TOKEN_ACCOUNT_SIZE } from '../chain/router/accounts.ts';
import { planRecovery } from '../chain/router/bundle.ts';
import { COMPUTE_UNIT_LIMITS } from '../chain/router/footprint.ts';
import { findRouteAddresses, type RouteAddresses } from '../chain/router/pda.ts';
import { computeRecovery, type RecoveryFigures, type RouteSnapshot } from '../chain/router/recovery.ts';
import type {
  AccountReader,
  BlockhashLifetime,
  BlockhashReader,
  CallOptions,
  ClockReader,
  RentReader,
  TransactionReader,
  TransactionSimulator,
} from '../chain/types.ts';
import { AppError } from '../domain/errors.ts';
import type { Recovery, RecoveryKind, RouteRecord, Transfer } from '../domain/transfer.ts';
import type { Platform } from '../platform/platform.ts';
import type { DeploymentStore } from '../store/deployments.ts';
import { buildTransaction, bundlePrice, type PriorityFeeReader } from './prepare.ts';
import { readMaybeAccounts, readRoute, recoveryOf } from './route-reads.ts';
import { landedTransaction, type SignatureProblem } from './signatures.ts';

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

/** The transfer with its `recovery` figures read from the chain now (they move whenever anyone sends to a route account). */
export async function withCurrentRecovery(
  chain: AccountReader & ClockReader,
  programAddress: Address,
  transfer: Transfer,
  options: CallOptions = {},
): Promise<Transfer> {
  if (!transfer.route) return transfer;
  const { recovery } = await readRecovery(chain, programAddress, transfer as RoutedTransfer, options);
  return { ...transfer, recovery };
}

export interface RecoveryBundleDeps {
  chain: AccountReader & BlockhashReader & RentReader & TransactionSimulator & PriorityFeeReader;
  deployments: Pick<DeploymentStore, 'keeperPrivateKey'>;
  platform: Pick<Platform, 'programAddress' | 'priorityFeeCapMicroLamportsPerCu'>;
  /** The least compute-unit price of a prepared transaction (PRIORITY_FEE_MICROLAMPORTS_PER_CU). */
  priorityFeeFloorMicroLamportsPerCu: bigint;
}

/** One transaction of a rescue or reclaim bundle: the source signs and pays; `partialSigners` signed already. */
export interface RecoveryTransaction {
  base64: string;
  partialSigners: Address[];
}

/**
 * The transactions that return everything a recovery of `kind` finds on chain to the source:
 * every live account of the route closed (its tokens moved to the source's token account first),
 * the route with the last of them, the source's orchestrator config when no other route of the
 * source is open, and the keeper's whole balance swept back (signed here with the keeper's key, so
 * the source's wallet, the fee payer, adds the only missing signature). The source's token account
 * is created when tokens must go back and it has none. On native SOL the wrapped SOL goes to a
 * fresh token account of the source's that the same transaction closes again, so it arrives as
 * SOL whatever wrapped-SOL account the source holds.
 */
export async function buildRecoveryBundle(
  deps: RecoveryBundleDeps,
  transfer: RoutedTransfer,
  kind: RecoveryKind,
  read: RecoveryRead,
  options: CallOptions = {},
): Promise<{ transactions: RecoveryTransaction[]; lifetime: BlockhashLifetime }> {
  const source = transfer.sourceOwner;
  const { snapshot, addresses } = read;
  // The route's own mint: a route deployed with other terms than quoted is rescued as it is.
  const mint = snapshot.route?.data.mint ?? transfer.tokenMint;
  const tokensBack = snapshot.tokenAccounts.some((account) => account.amount > 0n);
  const unwrap = tokensBack && isNativeMint(mint);
  const [[sourceAta], lifetime, price, keeperKey, holder, tokenRent] = await Promise.all([
    findAssociatedTokenPda({ owner: source, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS }),
    deps.chain.getLatestBlockhash(options),
    bundlePrice(deps, [source, snapshot.routeAddress], options),
    deps.deployments.keeperPrivateKey(transfer.id),
    unwrap ? generateKeyPairSigner() : null,
    unwrap ? deps.chain.getMinimumBalanceForRentExemption(TOKEN_ACCOUNT_SIZE, options) : 0n,
  ]);
  const [sourceAtaAccount] = await readMaybeAccounts(deps.chain, [sourceAta], options);
  const keeper = await createKeyPairSignerFromPrivateKeyBytes(keeperKey!);
  const sourceSigner = createNoopSigner(source);
  const openSourceAta = tokensBack && !unwrap && !sourceAtaAccount?.exists;
  const accounts = kind === 'rescue' ? read.figures.rescuableAccounts : read.figures.reclaimableAccounts;
  const sweep = snapshot.keeper.lamports;
  const groups: Instruction[][] = planRecovery({
    kind,
    source: sourceSigner,
    routeAddress: snapshot.routeAddress,
    route: snapshot.route?.data ?? null,
    orchestrator: addresses.orchestrator[0],
    steps: snapshot.stepAddresses,
    sourceToken: holder?.address ?? sourceAta,
    ...(openSourceAta ? { createSourceTokenAccount: { mint } } : {}),
    closeOrchestrator: accounts.some((account) => account.kind === 'orchestrator_config'),
    keeperSweep: { keeper, lamports: sweep },
    programAddress: deps.platform.programAddress,
  });
  // Token accounts close first and all fit the first transaction, so the tokens arrive there.
  if (holder) {
    groups[0]!.unshift(
      getCreateAccountInstruction({
        payer: sourceSigner,
        newAccount: holder,
        lamports: BigInt(tokenRent),
        space: TOKEN_ACCOUNT_SIZE,
        programAddress: TOKEN_PROGRAM_ADDRESS,
      }),
      getInitializeAccount3Instruction({ account: holder.address, mint, owner: source }),
    );
    groups[0]!.push(
      getCloseAccountInstruction({ account: holder.address, destination: source, owner: sourceSigner }),
    );
  }
  const transactions = await Promise.all(
    groups.map(async (instructions, index) => {
      const first = index === 0;
      const built = await buildTransaction(
        deps,
        {
          name: `${kind === 'rescue' ? 'rescueTxs' : 'reclaimTxs'}[${index}]`,
          feePayer: source,
          instructions,
          version: 0,
          lifetime,
          microLamportsPerCu: price,
        },
        COMPUTE_UNIT_LIMITS.recovery +
          (first && (openSourceAta || holder) ? COMPUTE_UNIT_LIMITS.createTokenAccount : 0) +
          (first && holder ? COMPUTE_UNIT_LIMITS.closeTokenAccount : 0),
        options,
      );
      const partialSigners = [
        ...(first && holder ? [holder.address] : []),
        ...(sweep > 0n && index === groups.length - 1 ? [keeper.address] : []),
      ];
      return { base64: built.base64, partialSigners };
    }),
  );
  return { transactions, lifetime };
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

/** Whether a transaction landed and succeeded on chain (null), or why not. */
export async function landedProblem(
  chain: TransactionReader,
  signature: Signature,
  options: CallOptions = {},
): Promise<SignatureProblem | null> {
  return (await landedTransaction(chain, signature, options)).problem;
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
