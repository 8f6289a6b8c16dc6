import type { Address, KeyPairSigner, ProgramDerivedAddressBump } from '@solana/kit';
import { findConfigPda } from '../chain/router/pda.ts';
import type { PriorityFeePolicy } from '../domain/priority-fees.ts';
import type { KeypairBytes } from './keypair.ts';
import { findProgramDataAddress } from './program-account.ts';

/** What the config's screening deposit is (0.002 SOL), held by each screened route until its verdict. */
export const SCREENING_DEPOSIT_LAMPORTS = 2_000_000n;

export type Cluster = 'mainnet' | 'devnet' | 'testnet' | 'localnet';

/** The three keys the service holds for the platform (private keys; sealed at rest). */
export interface PlatformKeys {
  /** The config admin; on the embedded chain also the program's upgrade authority. */
  admin: KeypairBytes;
  screeningAuthority: KeypairBytes;
  /**
   * The platform fee wallet: the config's platform wallet, which signs the withdrawals of the fees
   * the config holds and pays integrator reward payouts' network fees.
   */
  feeWallet: KeypairBytes;
}

/** The deployment's platform settings (configuration). */
export interface PlatformSettings {
  cluster: Cluster;
  /** SCREENING: routes hold a screening deposit and wait for a verdict. */
  screeningRequired: boolean;
  /** ROUTE_GRACE_SECONDS: a route's deadline is its last hop's due time plus this. */
  routeGraceSeconds: number;
  /** PRIORITY_FEE_CAP_MICROLAMPORTS_PER_CU: the highest compute-unit price a prepared transaction may carry. */
  priorityFeeCapMicroLamportsPerCu: bigint;
  /** HOP_PRIORITY_BUDGET_MULTIPLIER: a route's keeper is funded for its hops at this many times their starting price. */
  hopPriorityBudgetMultiplier: number;
}

/**
 * The platform as the service runs it: the router program, its protocol config, the keys the
 * service signs with and the settings of routes. Built once at start; read-only.
 */
export interface Platform {
  cluster: Cluster;
  /** The router program. */
  programAddress: Address;
  /** The router program's ProgramData account (names its upgrade authority). */
  programDataAddress: Address;
  /** The protocol config PDA `["config"]`: it and its token accounts hold the fees of settled routes. */
  configAddress: Address;
  configBump: ProgramDerivedAddressBump;
  /** The platform fee wallet: the config's platform wallet, the only key that can withdraw the fees. */
  feeWallet: Address;
  /** SCREENING for this cluster. */
  screeningRequired: boolean;
  routeGraceSeconds: number;
  priorityFeeCapMicroLamportsPerCu: bigint;
  hopPriorityBudgetMultiplier: number;
  /** The screening deposit the config is set up with (lamports). */
  screeningDepositLamports: bigint;
  /** Signs InitConfig (as the program's upgrade authority) and UpdateConfig. */
  admin: KeyPairSigner;
  /** Signs ScreenRoute verdicts. */
  screeningAuthority: KeyPairSigner;
  /** The fee wallet's signer: signs withdrawals from the config (reward payouts, the platform's own). */
  feeWalletSigner: KeyPairSigner;
}

/** Builds the platform from its keys and settings for the router program at `programAddress`. */
export async function createPlatform(input: {
  keys: PlatformKeys;
  programAddress: Address;
  settings: PlatformSettings;
}): Promise<Platform> {
  const { keys, programAddress, settings } = input;
  const [[configAddress, configBump], programDataAddress, admin, screeningAuthority, feeWalletSigner] =
    await Promise.all([
      findConfigPda(programAddress),
      findProgramDataAddress(programAddress),
      keys.admin.signer(),
      keys.screeningAuthority.signer(),
      keys.feeWallet.signer(),
    ]);
  return Object.freeze({
    cluster: settings.cluster,
    programAddress,
    programDataAddress,
    configAddress,
    configBump,
    feeWallet: feeWalletSigner.address,
    screeningRequired: settings.screeningRequired,
    routeGraceSeconds: settings.routeGraceSeconds,
    priorityFeeCapMicroLamportsPerCu: settings.priorityFeeCapMicroLamportsPerCu,
    hopPriorityBudgetMultiplier: settings.hopPriorityBudgetMultiplier,
    screeningDepositLamports: SCREENING_DEPOSIT_LAMPORTS,
    admin,
    screeningAuthority,
    feeWalletSigner,
  });
}

/** How the service prices compute units on this platform, with the configured floor (PRIORITY_FEE_MICROLAMPORTS_PER_CU). */
export function priorityFeePolicy(
  platform: Pick<Platform, 'priorityFeeCapMicroLamportsPerCu' | 'hopPriorityBudgetMultiplier'>,
  floorMicroLamportsPerCu: bigint,
): PriorityFeePolicy {
  return {
    floorMicroLamportsPerCu,
    capMicroLamportsPerCu: platform.priorityFeeCapMicroLamportsPerCu,
    hopBudgetMultiplier: platform.hopPriorityBudgetMultiplier,
  };
}
