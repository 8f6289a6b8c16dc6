import type { Address } from '@solana/kit';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { BalanceReader, RentReader, TokenAccountReader } from '../../../chain/types.ts';
import { type Owner, resolveSettings } from '../../../domain/integration.ts';
import { minimumClaimLamports } from '../../../domain/rewards.ts';
import type { IntegrationStore } from '../../../store/integrations.ts';
import type { RewardStore } from '../../../store/rewards.ts';
import { rewardCoverage } from '../../../use-cases/coverage.ts';
import { errorResponses, integerId } from '../../schemas/common.ts';
import { claimSchema, claimView, rewardsSchema, rewardsView } from '../../schemas/rewards.ts';
import { existingIntegration } from './integrations.ts';

/** Claims an operator sees per mode: the latest ones. */
const CLAIMS_SHOWN = 20;

const amount = z.string().regex(/^\d+$/);
const modeRewardsSchema = rewardsSchema.extend({
  claims: z
    .array(claimSchema.extend({ lastError: z.string().nullable().describe('Why a failed payout failed.') }))
    .describe(`The latest ${CLAIMS_SHOWN} claims, newest first.`),
  claimCount: z.int(),
});

const integrationRewardsSchema = z.object({
  integrationId: z.int(),
  test: modeRewardsSchema,
  live: modeRewardsSchema,
});

const coverageSchema = z.object({
  config: z.string().describe('The protocol config, which holds the platform’s earnings.'),
  covered: z.boolean().describe('Whether the platform’s earnings hold everything integrators are owed.'),
  assets: z.array(
    z.object({
      asset: z.string().describe('`lamports`, or a mint (raw units).'),
      owed: amount.describe('Claimable plus pending claims, every integration and both modes.'),
      held: amount.describe(
        'The protocol config’s lamports above its rent-exempt minimum, or its token account’s balance.',
      ),
      shortfall: amount,
    }),
  ),
});

interface AdminRewardDeps {
  integrations: IntegrationStore;
  rewards: RewardStore;
  chain: BalanceReader & TokenAccountReader & RentReader;
  /** The protocol config PDA, which holds the platform's earnings. */
  config: Address;
  minClaimLamports: bigint;
}

/** Operator views of integrator rewards: an integration's balances and claims, and the platform's coverage. */
export async function adminRewardEndpoints(app: FastifyInstance, deps: AdminRewardDeps) {
  registerIntegrationRewards(app, deps);
  registerRewardCoverage(app, deps);
}

/** `GET /integrations/{id}/rewards`: balances and the latest claims, per mode. */
function registerIntegrationRewards(app: FastifyInstance, deps: AdminRewardDeps) {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/integrations/:id/rewards',
    {
      schema: {
        params: z.object({ id: integerId }),
        response: { 200: integrationRewardsSchema, ...errorResponses },
      },
    },
    async (request) => {
      const integration = await existingIntegration(deps.integrations, request.params.id);
      const minimum = minimumClaimLamports(resolveSettings(integration.settings), deps.minClaimLamports);
      const view = (mode: 'test' | 'live') =>
        modeRewardsView(deps.rewards, { integrationId: integration.id, mode }, minimum);
      return { integrationId: integration.id, test: await view('test'), live: await view('live') };
    },
  );
}

/** One mode's balances and latest claims, as an operator sees them. */
async function modeRewardsView(rewards: RewardStore, owner: Owner, minimum: bigint) {
  const [balances, claims] = await Promise.all([
    rewards.balances(owner),
    rewards.listClaims(owner, { limit: CLAIMS_SHOWN, offset: 0 }),
  ]);
  return {
    ...rewardsView(balances, minimum, owner.mode === 'test'),
    claims: claims.items.map((claim) => ({ ...claimView(claim), lastError: claim.lastError })),
    claimCount: claims.total,
  };
}

/** `GET /rewards/coverage`: whether the platform's earnings cover what integrators are owed. */
function registerRewardCoverage(app: FastifyInstance, deps: AdminRewardDeps) {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/rewards/coverage',
    {
      schema: {
        response: { 200: coverageSchema, ...errorResponses },
      },
    },
    async () => {
      const lines = await rewardCoverage(deps);
      return {
        config: deps.config,
        covered: lines.every((line) => line.shortfall === 0n),
        assets: lines.map((line) => ({
          asset: line.asset,
          owed: line.owed.toString(),
          held: line.held.toString(),
          shortfall: line.shortfall.toString(),
        })),
      };
    },
  );
}
