import type { FastifyInstance } from 'fastify';
import { isAppError } from '../../../domain/errors.ts';
import type { PlatformAdmin } from '../../../platform/admin.ts';
import type { Platform } from '../../../platform/platform.ts';
import {
  PLATFORM_ROLE_NAMES,
  PLATFORM_ROLES,
  type PlatformRole,
  type PlatformStatus,
} from '../../../platform/status.ts';
import { duration, sol } from '../present.ts';
import { operatorPageData } from './layout.ts';

/** How long the page waits for the chain, as the admin API's status does. */
const STATUS_DEADLINE_MS = 10_000;

/** What each platform wallet pays for (src/platform/status.ts says how much each needs). */
const WALLET_DUTIES: Record<PlatformRole, string> = {
  admin: 'Signs and pays for creating or updating the protocol config (its rent and fee).',
  screeningAuthority: 'Signs and pays the fee of every screening verdict, when screening is required.',
  feeWallet:
    'Withdraws from the config: pays each reward payout’s network fee and lends a wrapped-SOL payout a token account’s rent. Routes do not depend on it.',
};

/** The platform's status in words: what a template only prints. */
function present(status: PlatformStatus, platform: Platform) {
  const shortfall = (role: PlatformRole) =>
    status.problems.find((problem) => problem.code === 'wallet_unfunded' && problem.role === role);
  const yesNo = (value: boolean) => (value ? 'yes' : 'no');
  return {
    cluster: status.cluster,
    ready: status.problems.length === 0,
    problems: status.problems.map((problem) => ({
      code: problem.code,
      message: problem.message,
      wallet: problem.role ? PLATFORM_ROLE_NAMES[problem.role] : null,
    })),
    program: [
      { name: 'Address', value: status.program.address, code: true },
      { name: 'Deployed', value: yesNo(status.program.deployed) },
      { name: 'Upgradeable', value: yesNo(status.program.upgradeable) },
      { name: 'Upgrade authority', value: status.program.upgradeAuthority ?? 'none', code: true },
      { name: 'The admin is its upgrade authority', value: yesNo(status.program.adminIsUpgradeAuthority) },
    ],
    config: [
      { name: 'Address', value: status.config.address, code: true },
      { name: 'Exists', value: yesNo(status.config.exists) },
      {
        name: 'Holds the service’s keys',
        value: status.config.matches
          ? 'yes'
          : status.config.exists
            ? `no: ${status.config.differences.join(', ')} differ`
            : 'no',
      },
      { name: 'Screening deposit', value: sol(status.config.expected.screeningDepositLamports) },
    ],
    wallets: PLATFORM_ROLES.map((role) => {
      const problem = shortfall(role);
      return {
        role,
        name: PLATFORM_ROLE_NAMES[role],
        address: status.wallets[role].address,
        balance: sol(status.wallets[role].lamports),
        duty: WALLET_DUTIES[role],
        short: problem !== undefined,
        shortfall: problem?.message ?? null,
      };
    }),
    settings: [
      { name: 'Screening required', value: yesNo(platform.screeningRequired) },
      { name: 'Route grace period', value: duration(platform.routeGraceSeconds) },
      {
        name: 'Priority-fee cap',
        value: `${platform.priorityFeeCapMicroLamportsPerCu} micro-lamports per compute unit`,
      },
    ],
  };
}

/**
 * `GET /dashboard/operator/platform`: the router program, the protocol config and the platform's
 * wallets on chain, read as the admin API's `GET /platform` reads them, with what keeps the
 * platform from working and, for each wallet, what a shortfall breaks.
 */
export async function platformPage(
  app: FastifyInstance,
  deps: { platformAdmin: Pick<PlatformAdmin, 'status'>; platform: Platform },
) {
  app.get('/platform', async (request, reply) => {
    let status: PlatformStatus;
    try {
      status = await deps.platformAdmin.status({ signal: AbortSignal.timeout(STATUS_DEADLINE_MS) });
    } catch (error) {
      request.log.warn({ err: error }, 'console: the platform status could not be read');
      const reason = isAppError(error)
        ? error.message
        : 'the chain did not answer in time, or refused the reads';
      return reply
        .code(503)
        .view(
          'operator/platform',
          operatorPageData(true, { title: 'Platform', unreadable: reason, status: null }, 'platform'),
        );
    }
    return reply.view(
      'operator/platform',
      operatorPageData(
        true,
        { title: 'Platform', unreadable: null, status: present(status, deps.platform) },
        'platform',
      ),
    );
  });
}
