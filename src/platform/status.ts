import type { Address, EncodedAccount } from '@solana/kit';
import { CONFIG_ACCOUNT_SIZE, decodeRouterConfig, TOKEN_ACCOUNT_SIZE } from '../chain/router/accounts.ts';
import type { AccountReader, CallOptions, RentReader } from '../chain/types.ts';
import { LAMPORTS_PER_SIGNATURE } from '../domain/route.ts';
import type { Platform } from './platform.ts';
import { type ProgramDeployment, readProgramDeployment } from './program-account.ts';

/** The three platform keys by role. */
export type PlatformRole = 'admin' | 'screeningAuthority' | 'feeWallet';

export const PLATFORM_ROLES: readonly PlatformRole[] = ['admin', 'screeningAuthority', 'feeWallet'];

/** The roles in words. */
export const PLATFORM_ROLE_NAMES: Record<PlatformRole, string> = {
  admin: 'admin',
  screeningAuthority: 'screening authority',
  feeWallet: 'platform fee wallet',
};

/** The platform's public keys by role. */
export function platformAddresses(platform: Platform): Record<PlatformRole, Address> {
  return {
    admin: platform.admin.address,
    screeningAuthority: platform.screeningAuthority.address,
    feeWallet: platform.feeWallet,
  };
}

/** What the protocol config holds (or should). */
export interface ConfigValues {
  admin: Address;
  screeningAuthority: Address;
  platformWallet: Address;
  screeningDepositLamports: bigint;
}

const CONFIG_FIELDS: Record<keyof ConfigValues, string> = {
  admin: 'admin',
  screeningAuthority: 'screening authority',
  platformWallet: 'platform wallet',
  screeningDepositLamports: 'screening deposit',
};

/** Something that keeps the platform from working, with a stable code and what to do about it. */
export interface PlatformProblem {
  code:
    | 'program_not_deployed'
    | 'program_not_upgradeable'
    | 'admin_not_upgrade_authority'
    | 'config_missing'
    | 'config_invalid'
    | 'config_differs'
    | 'config_admin_differs'
    | 'wallet_unfunded';
  message: string;
  /** The wallet concerned, for `wallet_unfunded`. */
  role?: PlatformRole;
}

/** The platform on chain compared with the service's keys. */
export interface PlatformStatus {
  cluster: Platform['cluster'];
  program: {
    address: Address;
    programDataAddress: Address;
    deployed: boolean;
    upgradeable: boolean;
    /** Null when the program is not deployed, not upgradeable, or immutable. */
    upgradeAuthority: Address | null;
    adminIsUpgradeAuthority: boolean;
  };
  config: {
    address: Address;
    /** Whether an account exists at the config address. */
    exists: boolean;
    /** Null when there is no valid config account. */
    onChain: ConfigValues | null;
    /** What the service's keys say it should hold. */
    expected: ConfigValues;
    matches: boolean;
    /** Fields that differ (every field when there is no config). */
    differences: (keyof ConfigValues)[];
  };
  wallets: Record<PlatformRole, { address: Address; lamports: bigint }>;
  /** Empty when the platform is ready for routes and reward claims. */
  problems: PlatformProblem[];
}

/** What the platform's status reads of a chain. */
export type StatusChain = AccountReader & RentReader;

const lamportsText = (lamports: bigint) => `${lamports} lamports`;

/** The config the service's keys call for. */
export function expectedConfig(platform: Platform): ConfigValues {
  return {
    admin: platform.admin.address,
    screeningAuthority: platform.screeningAuthority.address,
    platformWallet: platform.feeWallet,
    screeningDepositLamports: platform.screeningDepositLamports,
  };
}

/** The config account's values, or null when it is not a config of this program. */
function decodeConfig(account: EncodedAccount, program: Address): ConfigValues | null {
  if (account.programAddress !== program || account.data.length !== CONFIG_ACCOUNT_SIZE) return null;
  try {
    const { admin, screeningAuthority, platformWallet, screeningDepositLamports } = decodeRouterConfig(
      account.data,
    );
    return { admin, screeningAuthority, platformWallet, screeningDepositLamports };
  } catch {
    return null;
  }
}

/** The command that initialises or updates the config, as operators type it. */
export const PLATFORM_INIT_COMMAND = 'npm run admin -- platform init';
/** The command that deploys the router program, the admin as its upgrade authority. */
const PLATFORM_DEPLOY_COMMAND = 'npm run admin -- platform deploy';

/** Why the admin cannot initialise the config, when the program is the obstacle. */
function upgradeProblem(deployment: ProgramDeployment, platform: Platform): PlatformProblem | undefined {
  if (!deployment.deployed) return undefined;
  const admin = platform.admin.address;
  if (!deployment.upgradeable || deployment.upgradeAuthority === null) {
    return {
      code: 'program_not_upgradeable',
      message: `The router program ${platform.programAddress} has no upgrade authority, and only its upgrade authority may initialise the config: deploy it at a new address with the admin ${admin} as its upgrade authority (\`${PLATFORM_DEPLOY_COMMAND}\`), set ROUTER_PROGRAM_ID to that address, then run \`${PLATFORM_INIT_COMMAND}\`.`,
    };
  }
  if (deployment.upgradeAuthority !== admin) {
    return {
      code: 'admin_not_upgrade_authority',
      message: `The admin ${admin} is not the router program's upgrade authority (${deployment.upgradeAuthority}), and only the upgrade authority may initialise the config: set PLATFORM_ADMIN_KEYPAIR to the upgrade authority's key, or make ${admin} the upgrade authority (\`solana program set-upgrade-authority\`), then run \`${PLATFORM_INIT_COMMAND}\`.`,
    };
  }
  return undefined;
}

type WalletBalance = PlatformStatus['wallets'][PlatformRole];

/** The rent-exempt minimums the platform's checks compare balances with. */
interface Rents {
  wallet: bigint;
  config: bigint;
  tokenAccount: bigint;
}

/** What the status reads of the chain. */
interface StatusAccounts {
  deployment: ProgramDeployment;
  configAccount: EncodedAccount | null;
  wallets: PlatformStatus['wallets'];
  rents: Rents;
}

/** The accounts the status looks at, read in one batch, and the rents they are compared with. */
async function readStatusAccounts(
  chain: StatusChain,
  platform: Platform,
  options: CallOptions,
): Promise<StatusAccounts> {
  const roleAddresses = platformAddresses(platform);
  const [accounts, wallet, config, tokenAccount] = await Promise.all([
    chain.getAccounts(
      [
        platform.programAddress,
        platform.programDataAddress,
        platform.configAddress,
        ...PLATFORM_ROLES.map((role) => roleAddresses[role]),
      ],
      options,
    ),
    chain.getMinimumBalanceForRentExemption(0, options),
    chain.getMinimumBalanceForRentExemption(CONFIG_ACCOUNT_SIZE, options),
    chain.getMinimumBalanceForRentExemption(TOKEN_ACCOUNT_SIZE, options),
  ]);
  const [programAccount, programDataAccount, configAccount, ...walletAccounts] = accounts;
  const wallets = Object.fromEntries(
    PLATFORM_ROLES.map((role, i) => [
      role,
      { address: roleAddresses[role], lamports: walletAccounts[i]?.lamports ?? 0n },
    ]),
  ) as PlatformStatus['wallets'];
  return {
    deployment: readProgramDeployment(programAccount ?? null, programDataAccount ?? null),
    configAccount: configAccount ?? null,
    wallets,
    rents: { wallet, config, tokenAccount },
  };
}

function programNotDeployed(platform: Platform): PlatformProblem {
  return {
    code: 'program_not_deployed',
    message: `The router program is not deployed at ${platform.programAddress} on ${platform.cluster} (ROUTER_PROGRAM_ID says where): deploy it with the admin ${platform.admin.address} as its upgrade authority (\`${PLATFORM_DEPLOY_COMMAND}\`), set ROUTER_PROGRAM_ID to the address it prints, then run \`${PLATFORM_INIT_COMMAND}\`.`,
  };
}

/** What keeps the config from holding the service's keys, and the admin from fixing it. */
function configProblems(
  platform: Platform,
  deployment: ProgramDeployment,
  config: Pick<PlatformStatus['config'], 'exists' | 'onChain' | 'expected' | 'differences'>,
  admin: WalletBalance,
  configRent: bigint,
): PlatformProblem[] {
  if (!config.exists) return missingConfigProblems(platform, deployment, admin, configRent);
  if (!config.onChain) {
    return [
      {
        code: 'config_invalid',
        message: `The account at the config address ${platform.configAddress} is not a protocol config of the router program ${platform.programAddress}.`,
      },
    ];
  }
  if (config.differences.length === 0) return [];
  return differingConfigProblems(config.onChain, config.expected, config.differences, admin);
}

function missingConfigProblems(
  platform: Platform,
  deployment: ProgramDeployment,
  admin: WalletBalance,
  configRent: bigint,
): PlatformProblem[] {
  const problems: PlatformProblem[] = [
    {
      code: 'config_missing',
      message: `The protocol config ${platform.configAddress} does not exist, so no route can be created (InvalidConfig): run \`${PLATFORM_INIT_COMMAND}\`.`,
    },
  ];
  const upgrade = upgradeProblem(deployment, platform);
  if (upgrade) problems.push(upgrade);
  const needed = configRent + LAMPORTS_PER_SIGNATURE;
  if (admin.lamports < needed) {
    problems.push({
      code: 'wallet_unfunded',
      role: 'admin',
      message: `The admin ${admin.address} holds ${lamportsText(admin.lamports)}; initialising the config needs at least ${lamportsText(needed)} (the config's rent and the fee): fund it.`,
    });
  }
  return problems;
}

function differingConfigProblems(
  onChain: ConfigValues,
  expected: ConfigValues,
  differences: readonly (keyof ConfigValues)[],
  admin: WalletBalance,
): PlatformProblem[] {
  const listed = differences
    .map((field) => `${CONFIG_FIELDS[field]} ${onChain[field]} (the service's: ${expected[field]})`)
    .join(', ');
  if (onChain.admin !== expected.admin) {
    return [
      {
        code: 'config_admin_differs',
        message: `The protocol config differs from the service's keys: ${listed}. Only the config's admin ${onChain.admin} may change it: set PLATFORM_ADMIN_KEYPAIR to that key, or have that admin hand the config over to ${expected.admin}.`,
      },
    ];
  }
  const problems: PlatformProblem[] = [
    {
      code: 'config_differs',
      message: `The protocol config differs from the service's keys: ${listed}. Run \`${PLATFORM_INIT_COMMAND}\` to update it.`,
    },
  ];
  if (admin.lamports < LAMPORTS_PER_SIGNATURE) {
    problems.push({
      code: 'wallet_unfunded',
      role: 'admin',
      message: `The admin ${admin.address} holds ${lamportsText(admin.lamports)}; updating the config needs at least ${lamportsText(LAMPORTS_PER_SIGNATURE)} (the fee): fund it.`,
    });
  }
  return problems;
}

/** The wallets besides the admin that hold too little for their work. */
function walletProblems(
  platform: Platform,
  wallets: PlatformStatus['wallets'],
  rents: Rents,
): PlatformProblem[] {
  const problems: PlatformProblem[] = [];
  // Settlements pay into the config, never into a wallet. The fee wallet signs withdrawals from it
  // and pays each reward payout's network fee; a payout of wrapped SOL borrows from it the rent of
  // the account that unwraps it, beyond what the claim's own lamports cover (back within the same
  // transaction). A token account's rent is more than an empty wallet's rent-exempt minimum, so a
  // wallet that holds it after the fee stays rent exempt too.
  const feeWalletNeeds = rents.tokenAccount + LAMPORTS_PER_SIGNATURE;
  if (wallets.feeWallet.lamports < feeWalletNeeds) {
    problems.push({
      code: 'wallet_unfunded',
      role: 'feeWallet',
      message: `The ${PLATFORM_ROLE_NAMES.feeWallet} ${wallets.feeWallet.address} holds ${lamportsText(wallets.feeWallet.lamports)}, less than ${lamportsText(feeWalletNeeds)}: it pays each reward payout's network fee (${lamportsText(LAMPORTS_PER_SIGNATURE)}) and lends a payout of wrapped SOL up to a token account's rent (${lamportsText(rents.tokenAccount)}, back in the same transaction), so reward claims fail (their amounts stay claimable) until it holds that; routes do not depend on it: fund it.`,
    });
  }
  if (platform.screeningRequired && wallets.screeningAuthority.lamports < rents.wallet) {
    problems.push({
      code: 'wallet_unfunded',
      role: 'screeningAuthority',
      message: `The ${PLATFORM_ROLE_NAMES.screeningAuthority} ${wallets.screeningAuthority.address} holds ${lamportsText(wallets.screeningAuthority.lamports)}, less than a wallet's rent-exempt minimum (${lamportsText(rents.wallet)}); it pays the fee of every screening verdict: fund it.`,
    });
  }
  return problems;
}

/** Reads the program, the config and the wallets, and says what keeps the platform from working. */
export async function readPlatformStatus(
  chain: StatusChain,
  platform: Platform,
  options: CallOptions = {},
): Promise<PlatformStatus> {
  const { deployment, configAccount, wallets, rents } = await readStatusAccounts(chain, platform, options);
  const upgradeAuthority = deployment.deployed && deployment.upgradeable ? deployment.upgradeAuthority : null;
  const expected = expectedConfig(platform);
  const onChain = configAccount ? decodeConfig(configAccount, platform.programAddress) : null;
  const differences = (Object.keys(CONFIG_FIELDS) as (keyof ConfigValues)[]).filter(
    (field) => onChain?.[field] !== expected[field],
  );
  const config = { exists: configAccount !== null, onChain, expected, differences };
  const problems: PlatformProblem[] = [
    ...(deployment.deployed ? [] : [programNotDeployed(platform)]),
    ...configProblems(platform, deployment, config, wallets.admin, rents.config),
    ...walletProblems(platform, wallets, rents),
  ];
  return {
    cluster: platform.cluster,
    program: {
      address: platform.programAddress,
      programDataAddress: platform.programDataAddress,
      deployed: deployment.deployed,
      upgradeable: deployment.deployed && deployment.upgradeable,
      upgradeAuthority,
      adminIsUpgradeAuthority: upgradeAuthority === platform.admin.address,
    },
    config: {
      address: platform.configAddress,
      exists: config.exists,
      onChain,
      expected,
      matches: onChain !== null && differences.length === 0,
      differences,
    },
    wallets,
    problems,
  };
}
