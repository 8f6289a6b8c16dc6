import {
  type Address,
  createKeyPairSignerFromPrivateKeyBytes,
  createNoopSigner,
  generateKeyPairSigner,
  type Instruction,
  type KeyPairSigner,
  type TransactionSigner,
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
import type {
  AccountReader,
  BlockhashLifetime,
  BlockhashReader,
  CallOptions,
  RentReader,
  TransactionSimulator,
} from '../chain/types.ts';
import type { Clock } from '../domain/clock.ts';
import type { RecoveryKind } from '../domain/transfer.ts';
import type { Platform } from '../platform/platform.ts';
import type { Db } from '../store/db.ts';
import type { DeploymentStore } from '../store/deployments.ts';
import type { RecoveryStore } from '../store/recovery.ts';
import type { TransferStore } from '../store/transfers.ts';
import { buildTransaction, bundlePrice, type PriorityFeeReader } from './bundle-transactions.ts';
import type { Commit } from './commit.ts';
import { dependencyDeadline } from './deadline.ts';
import type { OverdueDeps } from './overdue.ts';
import type { RecoveryRead, RoutedTransfer } from './recovery.ts';
import { readMaybeAccounts } from './route-reads.ts';
import type { SignatureLookup } from './signatures.ts';

/*
 * The bundle a rescue or a rent reclaim hands the source: the transactions it signs and pays for,
 * the service co-signing the keeper's sweep.
 */

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
async function buildRecoveryBundle(
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
  if (holder) unwrapThrough(groups[0]!, { holder, source: sourceSigner, mint, rent: BigInt(tokenRent) });
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
 * Makes the first transaction deliver wrapped SOL as SOL: a fresh token account of the source's
 * (`holder`) opened before the route's token accounts close into it, and closed to the source after.
 */
function unwrapThrough(
  instructions: Instruction[],
  input: { holder: KeyPairSigner; source: TransactionSigner; mint: Address; rent: bigint },
) {
  const { holder, source, mint } = input;
  instructions.unshift(
    getCreateAccountInstruction({
      payer: source,
      newAccount: holder,
      lamports: input.rent,
      space: TOKEN_ACCOUNT_SIZE,
      programAddress: TOKEN_PROGRAM_ADDRESS,
    }),
    getInitializeAccount3Instruction({ account: holder.address, mint, owner: source.address }),
  );
  instructions.push(
    getCloseAccountInstruction({ account: holder.address, destination: source.address, owner: source }),
  );
}

/** What rescue and rent reclaim use: the chain, the stores, the keeper's key for its sweep. */
export type RecoveryDeps = RecoveryBundleDeps &
  OverdueDeps & {
    chain: RecoveryBundleDeps['chain'] & OverdueDeps['chain'] & SignatureLookup;
    db: Pick<Db, 'transaction'>;
    transfers: Pick<TransferStore, 'get' | 'markRecoverable'>;
    recovery: RecoveryStore;
    clock: Clock;
  };

/** A recovery bundle handed out: its transactions, their lifetime, and the route as read for it. */
export interface PreparedRecovery {
  transactions: RecoveryTransaction[];
  lifetime: BlockhashLifetime;
  read: RecoveryRead;
}

/**
 * Builds the bundle of a rescue or reclaim from what the chain holds now, and keeps it (it
 * replaces the transfer's earlier one of that kind) so a confirm can match what it reports.
 */
export async function handOutRecoveryBundle<R>(
  deps: RecoveryDeps,
  transfer: RoutedTransfer,
  kind: RecoveryKind,
  read: RecoveryRead,
  commit: Commit<PreparedRecovery, R>,
): Promise<R> {
  const options = { signal: dependencyDeadline() };
  const { transactions, lifetime } = await buildRecoveryBundle(deps, transfer, kind, read, options);
  return commit(async (tx) => {
    await deps.recovery.saveBundle(tx, transfer.id, {
      kind,
      transactions: transactions.map((transaction) => transaction.base64),
      recovery: read.recovery,
      now: deps.clock.now(),
    });
    return { transactions, lifetime, read };
  });
}
