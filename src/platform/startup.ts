import { readFile } from 'node:fs/promises';
import type { Address } from '@solana/kit';
import type { LocalChainCheats, ProgramDeployment } from '@transfer-router/local-chain';
import { routerProgramPath } from '../chain/router/program.ts';
import type { BalanceReader } from '../chain/types.ts';
import type { PlatformAdmin, PlatformInitAction } from './admin.ts';
import type { Platform } from './platform.ts';
import { PLATFORM_ROLE_NAMES, PLATFORM_ROLES, type PlatformRole, platformAddresses } from './status.ts';

/** What each platform wallet gets on the embedded chain, and the balance below which it gets it again. */
export const LOCAL_WALLET_LAMPORTS = 10_000_000_000n;
const LOCAL_WALLET_LOW_LAMPORTS = 1_000_000_000n;

/** Where the platform's set-up reports its steps (a pino logger fits). */
export interface PlatformLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/** The router program as the embedded chain deploys it, with `upgradeAuthority` (the platform admin). */
export async function localRouterDeployment(
  programAddress: Address,
  upgradeAuthority: Address | null,
): Promise<ProgramDeployment> {
  return { programId: programAddress, elf: await readFile(routerProgramPath('v0')), upgradeAuthority };
}

/** Airdrops to every platform wallet that holds less than 1 SOL on the embedded chain; resolves with those funded. */
export async function fundLocalWallets(deps: {
  chain: BalanceReader;
  airdrop: LocalChainCheats['airdrop'];
  platform: Platform;
  log: PlatformLog;
}): Promise<PlatformRole[]> {
  const addresses = platformAddresses(deps.platform);
  const funded: PlatformRole[] = [];
  for (const role of PLATFORM_ROLES) {
    const address = addresses[role];
    if ((await deps.chain.getBalance(address)) >= LOCAL_WALLET_LOW_LAMPORTS) continue;
    await deps.airdrop(address, LOCAL_WALLET_LAMPORTS);
    funded.push(role);
    deps.log.info(
      { step: 'platform', role, address, lamports: String(LOCAL_WALLET_LAMPORTS) },
      `Funded the ${PLATFORM_ROLE_NAMES[role]} ${address} with 10 SOL on the embedded chain`,
    );
  }
  return funded;
}

/**
 * Local mode's platform on the embedded chain (the router program already deployed with the admin
 * as upgrade authority): funds the wallets, and initialises the protocol config when there is
 * none. An existing config is left as it is; if it does not match the keys, the log says so.
 */
export async function setUpLocalPlatform(deps: {
  chain: BalanceReader;
  airdrop: LocalChainCheats['airdrop'];
  platform: Platform;
  platformAdmin: PlatformAdmin;
  log: PlatformLog;
}): Promise<{ funded: PlatformRole[]; config: PlatformInitAction | 'left as it is' }> {
  const { log, platform } = deps;
  const funded = await fundLocalWallets(deps);
  const status = await deps.platformAdmin.status();
  let config: PlatformInitAction | 'left as it is' = 'left as it is';
  if (status.problems.some((problem) => problem.code === 'config_missing')) {
    const result = await deps.platformAdmin.init();
    config = result.action;
    if (result.action === 'initialized')
      log.info({ step: 'platform', config: platform.configAddress }, result.message);
    else
      log.warn(
        { step: 'platform', config: platform.configAddress, action: result.action },
        `The protocol config could not be initialised: ${result.message}`,
      );
  } else if (status.config.matches) {
    log.info(
      { step: 'platform', config: platform.configAddress },
      `The protocol config ${platform.configAddress} is in place and matches the platform keys`,
    );
  } else {
    log.warn(
      { step: 'platform', config: platform.configAddress, differences: status.config.differences },
      `The protocol config on the embedded chain does NOT match the platform keys; it is left as it is. ${status.problems.map((problem) => problem.message).join(' ')}`,
    );
  }
  return { funded, config };
}

/**
 * On a chain the service does not run (RPC_URL), the start only looks: it logs whether the platform
 * is ready, or each problem with what to do. A chain that cannot be read does not stop the start.
 */
export async function reportPlatform(deps: {
  platformAdmin: PlatformAdmin;
  platform: Platform;
  log: PlatformLog;
}) {
  const { log, platform } = deps;
  try {
    const status = await deps.platformAdmin.status();
    if (status.problems.length === 0) {
      log.info(
        { step: 'platform', config: platform.configAddress },
        `The protocol config ${platform.configAddress} matches the platform keys and the wallets are funded`,
      );
      return;
    }
    for (const problem of status.problems)
      log.warn({ step: 'platform', problem: problem.code, role: problem.role }, problem.message);
  } catch (error) {
    log.warn(
      { step: 'platform', err: error },
      'Could not read the router program and protocol config on chain; check them with `npm run admin -- platform status`',
    );
  }
}
