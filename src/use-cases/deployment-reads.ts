import { type Address, createKeyPairSignerFromPrivateKeyBytes, type MaybeEncodedAccount } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import {
  decodeRouterConfig,
  ORCHESTRATOR_ACCOUNT_SIZE,
  ROUTE_ACCOUNT_SIZE,
  type RouterConfig,
  STEP_ACCOUNT_SIZE,
  TOKEN_ACCOUNT_SIZE,
} from '../chain/router/accounts.ts';
import { COMPUTE_UNIT_LIMITS } from '../chain/router/footprint.ts';
import { findRouteAddresses } from '../chain/router/pda.ts';
import type {
  AccountReader,
  BlockhashLifetime,
  BlockhashReader,
  CallOptions,
  ClockReader,
  RentReader,
  TransactionSimulator,
} from '../chain/types.ts';
import type { Clock } from '../domain/clock.ts';
import { AppError } from '../domain/errors.ts';
import { hopBudgetPrice, keeperFundingLamports } from '../domain/priority-fees.ts';
import type { Transfer } from '../domain/transfer.ts';
import type { Platform } from '../platform/platform.ts';
import type { DeploymentStore } from '../store/deployments.ts';
import { bundlePrice, type PriorityFeeReader } from './bundle-transactions.ts';
import { readMaybeAccounts } from './route-reads.ts';

/*
 * What a deployment bundle is built from: every read of the chain at once, and the transfer's
 * keeper, given on its first prepare.
 */

export interface DeploymentBundleDeps {
  chain: AccountReader &
    BlockhashReader &
    ClockReader &
    RentReader &
    TransactionSimulator &
    PriorityFeeReader;
  deployments: Pick<DeploymentStore, 'assignRoute'>;
  platform: Pick<
    Platform,
    | 'programAddress'
    | 'configAddress'
    | 'screeningRequired'
    | 'routeGraceSeconds'
    | 'priorityFeeCapMicroLamportsPerCu'
    | 'hopPriorityBudgetMultiplier'
  >;
  clock: Clock;
  /** The least compute-unit price a prepared transaction offers (PRIORITY_FEE_MICROLAMPORTS_PER_CU). */
  priorityFeeFloorMicroLamportsPerCu: bigint;
}

/** What a bundle is built from, read at once: addresses, the chain's state, prices and rents. */
export interface DeploymentReads {
  addresses: Awaited<ReturnType<typeof findRouteAddresses>>;
  sourceToken: Address;
  platformFeeToken: Address;
  recipientToken: Address;
  price: bigint;
  sourceWallet: MaybeEncodedAccount | undefined;
  sourceTokenAccount: MaybeEncodedAccount | undefined;
  feeTokenAccount: MaybeEncodedAccount | undefined;
  recipientTokenAccount: MaybeEncodedAccount | undefined;
  config: RouterConfig;
  lifetime: BlockhashLifetime;
  chainNow: bigint;
  keeperRent: bigint;
  /** Rent-exempt minimums of a route account, a token account, an orchestrator config, a step state. */
  rents: [bigint, bigint, bigint, bigint];
}

/**
 * Every read a bundle needs that needs neither the keeper nor the route on chain, at once; those
 * that need no address go while the addresses are derived.
 */
export async function readDeployment(
  deps: DeploymentBundleDeps,
  transfer: Transfer,
  options: CallOptions,
): Promise<DeploymentReads> {
  const { chain, platform } = deps;
  const source = transfer.sourceOwner;
  const ata = (owner: Address) =>
    findAssociatedTokenPda({ owner, mint: transfer.tokenMint, tokenProgram: TOKEN_PROGRAM_ADDRESS }).then(
      ([address]) => address,
    );
  const addressed = async () => {
    const [addresses, sourceToken, platformFeeToken, recipientToken] = await Promise.all([
      findRouteAddresses(
        { source, routeId: BigInt(transfer.id), hopCount: transfer.hops },
        platform.programAddress,
      ),
      ata(source),
      // The platform's fees settle into the config account's token account of the mint, which
      // only the program can move or close (docs/program.md).
      ata(platform.configAddress),
      ata(transfer.recipientWallet),
    ]);
    const [price, accounts] = await Promise.all([
      bundlePrice(deps, [source, addresses.route[0]], options),
      readMaybeAccounts(
        chain,
        [source, sourceToken, platformFeeToken, recipientToken, platform.configAddress],
        options,
      ),
    ]);
    return { addresses, sourceToken, platformFeeToken, recipientToken, price, accounts };
  };
  const rent = (size: number) =>
    chain.getMinimumBalanceForRentExemption(size, options).then((lamports) => BigInt(lamports));
  const [{ accounts, ...addressedReads }, lifetime, clock, keeperRent, rents] = await Promise.all([
    addressed(),
    chain.getLatestBlockhash(options),
    chain.getClock(options),
    rent(0),
    Promise.all([
      rent(ROUTE_ACCOUNT_SIZE),
      rent(TOKEN_ACCOUNT_SIZE),
      rent(ORCHESTRATOR_ACCOUNT_SIZE),
      rent(STEP_ACCOUNT_SIZE),
    ]),
  ]);
  const [sourceWallet, sourceTokenAccount, feeTokenAccount, recipientTokenAccount, configAccount] = accounts;
  if (!configAccount?.exists) {
    throw new AppError('MH_091', 'The router is not set up on this cluster yet. Retry later.');
  }
  return {
    ...addressedReads,
    sourceWallet,
    sourceTokenAccount,
    feeTokenAccount,
    recipientTokenAccount,
    config: decodeRouterConfig(configAccount.data),
    lifetime,
    chainNow: clock.unixTimestamp,
    keeperRent,
    rents: rents as [bigint, bigint, bigint, bigint],
  };
}

/** A fresh keeper key for a transfer's first prepare. */
export async function newKeeper(): Promise<{ address: Address; privateKey: Uint8Array }> {
  const privateKey = crypto.getRandomValues(new Uint8Array(32));
  const { address } = await createKeyPairSignerFromPrivateKeyBytes(privateKey);
  return { address, privateKey };
}

/**
 * Gives the transfer its route address and its keeper, the keeper's funding priced now: its hops'
 * fee budget at the budget's multiple of the bundle's price (src/domain/priority-fees.ts).
 */
export function assignKeeper(
  deps: DeploymentBundleDeps,
  transfer: Transfer,
  keeper: { address: Address; privateKey: Uint8Array },
  reads: DeploymentReads,
): Promise<Transfer> {
  const { platform } = deps;
  const budgetPrice = hopBudgetPrice(reads.price, {
    capMicroLamportsPerCu: platform.priorityFeeCapMicroLamportsPerCu,
    hopBudgetMultiplier: platform.hopPriorityBudgetMultiplier,
  });
  return deps.deployments.assignRoute(transfer.id, {
    routeAddress: reads.addresses.route[0],
    keeper: keeper.address,
    keeperPrivateKey: keeper.privateKey,
    keeperFundingLamports: keeperFundingLamports({
      hops: transfer.hops,
      rentExemptMinimum: reads.keeperRent,
      hopComputeUnitLimit: COMPUTE_UNIT_LIMITS.executeStep,
      budgetMicroLamportsPerCu: budgetPrice,
    }),
    hopPriorityMicroLamports: budgetPrice,
    now: deps.clock.now(),
  });
}
