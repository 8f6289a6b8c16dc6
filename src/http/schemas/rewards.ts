import { z } from 'zod';
import type { RewardBalances, RewardClaim } from '../../domain/rewards.ts';
import { lamportsToJson } from '../../domain/transfer-view.ts';

const rawAmount = z.string().regex(/^\d+$/);
const dateTime = z.iso.datetime();

/** The integrator's rewards (decisions, "Integrator rewards"). */
export const rewardsSchema = z
  .object({
    rewardsWallet: z.string().nullable().describe('Where claims pay; null until set.'),
    minimumClaimLamports: z.int().describe('A claim needs at least this many claimable lamports (MH_060).'),
    lamports: z
      .object({ accrued: z.int(), claimed: z.int(), claimable: z.int() })
      .describe(
        'The flat fee shares, in lamports. `claimed` counts claims pending or confirmed; accrued = claimed + claimable.',
      ),
    tokens: z
      .array(
        z.object({
          mint: z.string(),
          accruedRaw: rawAmount,
          claimedRaw: rawAmount,
          claimableRaw: rawAmount,
        }),
      )
      .describe(
        'The percentage fee shares, raw units per mint (the native mint’s share is paid as SOL). Ordered by mint.',
      ),
    isTestMode: z.boolean(),
  })
  .meta({ id: 'Rewards' });

/** One payout of claimable rewards to the rewards wallet. */
export const claimSchema = z
  .object({
    id: z.int(),
    status: z
      .enum(['pending', 'confirmed', 'failed'])
      .describe('`failed`: the payout did not land and its amounts are claimable again.'),
    wallet: z.string(),
    lamports: z
      .int()
      .describe(
        'What left the claimable lamports; the wallet receives `lamports - rentLamports` (plus any native mint share).',
      ),
    rentLamports: z
      .int()
      .describe('The part of `lamports` spent creating the wallet’s missing token accounts.'),
    tokens: z.array(z.object({ mint: z.string(), amountRaw: rawAmount })),
    signatures: z.array(z.string()).describe('The payout’s transaction signatures.'),
    createdAt: dateTime,
    confirmedAt: dateTime.nullable(),
  })
  .meta({ id: 'RewardClaim' });

/** The rewards as the API shows them. */
export function rewardsView(balances: RewardBalances, minimumClaimLamports: bigint, isTest: boolean) {
  return {
    rewardsWallet: balances.wallet,
    minimumClaimLamports: lamportsToJson(minimumClaimLamports),
    lamports: {
      accrued: lamportsToJson(balances.lamports.accrued),
      claimed: lamportsToJson(balances.lamports.claimed),
      claimable: lamportsToJson(balances.lamports.claimable),
    },
    tokens: balances.tokens.map((token) => ({
      mint: token.mint,
      accruedRaw: token.accruedRaw.toString(),
      claimedRaw: token.claimedRaw.toString(),
      claimableRaw: token.claimableRaw.toString(),
    })),
    isTestMode: isTest,
  };
}

/** A claim as the API shows it. */
export function claimView(claim: RewardClaim) {
  return {
    id: claim.id,
    status: claim.status,
    wallet: claim.wallet,
    lamports: lamportsToJson(claim.lamports),
    rentLamports: lamportsToJson(claim.rentLamports),
    tokens: claim.tokens.map((token) => ({ mint: token.mint, amountRaw: token.amountRaw.toString() })),
    signatures: [claim.signature],
    createdAt: claim.createdAt.toISOString(),
    confirmedAt: claim.confirmedAt?.toISOString() ?? null,
  };
}
