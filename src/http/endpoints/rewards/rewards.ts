import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Clock } from '../../../domain/clock.ts';
import { AppError } from '../../../domain/errors.ts';
import { minimumClaimLamports } from '../../../domain/rewards.ts';
import type { Platform } from '../../../platform/platform.ts';
import type { RewardStore } from '../../../store/rewards.ts';
import type { ChangeRunner } from '../../idempotency.ts';
import { limit } from '../../rate-limit.ts';
import { errorResponses } from '../../schemas/common.ts';
import { rewardsSchema, rewardsView } from '../../schemas/rewards.ts';
import { address } from '../../schemas/transfers.ts';

/** What the rewards endpoints need. */
export interface RewardEndpointDeps {
  rewards: RewardStore;
  runChange: ChangeRunner;
  clock: Clock;
  /** REWARDS_MIN_CLAIM_LAMPORTS: the minimum of integrations that do not override it. */
  minClaimLamports: bigint;
  /**
   * The fee wallet, which signs and pays payouts, and the protocol config, which holds what they
   * pay: a claim to either would pay the platform, so neither can be a rewards wallet.
   */
  platform: Pick<Platform, 'feeWallet' | 'configAddress'>;
}

/** `GET /rewards` and `POST /rewards/wallet`. */
export async function rewardsEndpoints(app: FastifyInstance, deps: RewardEndpointDeps) {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.get(
    '/rewards',
    {
      config: limit('rewards'),
      schema: {
        tags: ['Rewards'],
        operationId: 'getRewards',
        summary: 'Integrator rewards',
        description:
          'The integrator’s shares of the fees of settled transfers in this mode: the flat fee shares in lamports, the percentage fee shares per mint, what claims took and what is claimable.',
        response: { 200: rewardsSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { owner, settings, isTest } = request.auth;
      const balances = await deps.rewards.balances(owner);
      return rewardsView(balances, minimumClaimLamports(settings, deps.minClaimLamports), isTest);
    },
  );

  routes.post(
    '/rewards/wallet',
    {
      config: { ...limit('rewardsWallet'), fieldErrors: { wallet: 'MH_011' } },
      schema: {
        tags: ['Rewards'],
        operationId: 'setRewardsWallet',
        summary: 'Set the rewards wallet',
        description:
          'Sets the wallet that claims pay in this mode (MH_011 when it is not a wallet address) and answers the rewards.',
        body: z
          .object({ wallet: address('wallet address').describe('A Solana wallet address (base58).') })
          .strict(),
        response: { 200: rewardsSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { owner, settings, isTest } = request.auth;
      const { wallet } = request.body;
      const platformAccount =
        wallet === deps.platform.feeWallet
          ? 'fee wallet, which pays claims'
          : wallet === deps.platform.configAddress
            ? 'protocol config, which holds what claims pay'
            : null;
      if (platformAccount) {
        throw new AppError('MH_011', `The rewards wallet cannot be the platform’s ${platformAccount}.`, {
          param: 'wallet',
        });
      }
      return deps.runChange(request, reply, async (tx) => {
        await deps.rewards.setWallet(tx, owner, wallet, deps.clock.now());
        const balances = await deps.rewards.balances(owner, tx);
        return rewardsView(balances, minimumClaimLamports(settings, deps.minClaimLamports), isTest);
      });
    },
  );
}
