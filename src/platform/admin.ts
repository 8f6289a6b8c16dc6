import type { Signature } from '@solana/kit';
import { getInitConfigInstruction, getUpdateConfigInstruction } from '../chain/router/instructions.ts';
import type { CallOptions } from '../chain/types.ts';
import type { Platform } from './platform.ts';
import { PlatformTransactionError, sendAndConfirm, type TransactionChain } from './send.ts';
import { type PlatformProblem, type PlatformStatus, readPlatformStatus, type StatusChain } from './status.ts';

/** What the platform's administration asks of a chain. */
export type PlatformChain = StatusChain & TransactionChain;

/** What `init` did: created the config, changed it, found it right, or could not act (its message says why). */
export type PlatformInitAction = 'initialized' | 'updated' | 'unchanged' | 'refused';

export interface PlatformInitResult {
  action: PlatformInitAction;
  /** The transaction that created or changed the config. */
  signature: Signature | null;
  message: string;
  /** The platform after the action. */
  status: PlatformStatus;
}

/** Whether a problem stops `init`: it cures a missing or differing config, and needs a funded admin. */
function blocksInit(problem: PlatformProblem): boolean {
  if (problem.code === 'wallet_unfunded') return problem.role === 'admin';
  return problem.code !== 'config_missing' && problem.code !== 'config_differs';
}

const unchanged = (platform: Platform, status: PlatformStatus): PlatformInitResult => ({
  action: 'unchanged',
  signature: null,
  message: `The protocol config ${platform.configAddress} already holds the service's keys; nothing to do.`,
  status,
});

/** The platform's administration: its status on chain, and initialising or updating the protocol config. */
export function createPlatformAdmin(deps: { chain: PlatformChain; platform: Platform; pollMs?: number }) {
  const { chain, platform } = deps;
  const status = (options: CallOptions = {}) => readPlatformStatus(chain, platform, options);

  return {
    status,

    /**
     * Creates the protocol config (InitConfig, signed by the admin as the program's upgrade
     * authority) or brings it in line with the service's keys (UpdateConfig, signed by the admin);
     * does nothing when it already matches. Safe to repeat and to run from two processes at once.
     */
    async init(options: CallOptions = {}): Promise<PlatformInitResult> {
      const before = await status(options);
      const { onChain, expected } = before.config;
      if (before.config.matches) return unchanged(platform, before);
      const blocking = before.problems.filter(blocksInit);
      if (blocking.length > 0) {
        return {
          action: 'refused',
          signature: null,
          message: blocking.map((problem) => problem.message).join(' '),
          status: before,
        };
      }
      const instruction = onChain
        ? getUpdateConfigInstruction(
            {
              admin: platform.admin,
              config: platform.configAddress,
              newAdmin: expected.admin,
              screeningAuthority: expected.screeningAuthority,
              platformWallet: expected.platformWallet,
              screeningDepositLamports: expected.screeningDepositLamports,
            },
            platform.programAddress,
          )
        : getInitConfigInstruction(
            {
              admin: platform.admin,
              config: [platform.configAddress, platform.configBump],
              programData: platform.programDataAddress,
              screeningAuthority: expected.screeningAuthority,
              platformWallet: expected.platformWallet,
              screeningDepositLamports: expected.screeningDepositLamports,
            },
            platform.programAddress,
          );
      let signature: Signature;
      try {
        signature = await sendAndConfirm(chain, platform.admin, [instruction], {
          signal: options.signal,
          pollMs: deps.pollMs,
        });
      } catch (error) {
        // Another process may have done the same a moment earlier: then there is nothing left to do.
        if (!(error instanceof PlatformTransactionError)) throw error;
        const now = await status(options);
        if (!now.config.matches) throw error;
        return unchanged(platform, now);
      }
      const after = await status(options);
      const values = `admin ${expected.admin}, screening authority ${expected.screeningAuthority}, platform wallet ${expected.platformWallet}, screening deposit ${expected.screeningDepositLamports} lamports`;
      return onChain
        ? {
            action: 'updated',
            signature,
            message: `Updated the protocol config ${platform.configAddress} (${before.config.differences.join(', ')}) to ${values}, in transaction ${signature}.`,
            status: after,
          }
        : {
            action: 'initialized',
            signature,
            message: `Initialised the protocol config ${platform.configAddress} with ${values}, in transaction ${signature}.`,
            status: after,
          };
    },
  };
}

/** The platform's administration (see {@link createPlatformAdmin}). */
export type PlatformAdmin = ReturnType<typeof createPlatformAdmin>;
