import type { Address, Instruction } from '@solana/kit';
import { computeBudgetOf, writtenAccounts } from '../chain/fees.ts';
import type { SignedTransaction } from '../chain/landing.ts';
import { COMPUTE_UNIT_LIMITS } from '../chain/router/footprint.ts';
import type { PriorityFeeReader } from '../chain/types.ts';
import {
  escalatedPrice,
  hopFeeBudgetLamports,
  keeperTransactionPrice,
  marketPrice,
  type PriorityFeePolicy,
} from '../domain/priority-fees.ts';
import type { RouteRecord, Transfer } from '../domain/transfer.ts';

/*
 * What the keeper offers per compute unit for its transactions on a route: the market's price of
 * the accounts each one writes, read when it is signed, raised after one expired unlanded, within
 * the cap and the route's fee budget (src/domain/priority-fees.ts).
 */

/** What pricing the keeper's transactions takes. */
export interface HopFeeDeps {
  chain: PriorityFeeReader;
  priorityFees: PriorityFeePolicy;
}

/**
 * The price of a keeper transaction of `instructions` on the transfer's route, as a function of
 * the compute-unit limit its simulation sizes: the market's price of the accounts it writes, at
 * least `least`, within the cap and what the route's fee budget has left once
 * `reservedSignatures` more signatures are paid for.
 */
export async function keeperPrice(
  deps: HopFeeDeps,
  transfer: Pick<Transfer, 'hops'> & { route: RouteRecord },
  input: { payer: Address; instructions: readonly Instruction[]; least: bigint; reservedSignatures: number },
): Promise<(computeUnitLimit: number) => bigint> {
  const recent = await deps.chain.getRecentPrioritizationFees(
    writtenAccounts(input.payer, input.instructions),
  );
  const market = marketPrice(recent, deps.priorityFees);
  const budgetLamports = hopFeeBudgetLamports({
    hops: transfer.hops,
    hopComputeUnitLimit: COMPUTE_UNIT_LIMITS.executeStep,
    budgetMicroLamportsPerCu: transfer.route.hopPriorityMicroLamports,
  });
  return (computeUnitLimit) =>
    keeperTransactionPrice({
      market,
      least: input.least,
      capMicroLamportsPerCu: deps.priorityFees.capMicroLamportsPerCu,
      computeUnitLimit,
      budgetLamports,
      spentLamports: transfer.route.hopFeesSpentLamports,
      reservedSignatures: input.reservedSignatures,
    });
}

/** The least price of the hop transaction that replaces `expired`, whose blockhash expired before it landed. */
export const priceAfterExpiry = (
  deps: Pick<HopFeeDeps, 'priorityFees'>,
  expired: Pick<SignedTransaction, 'base64'>,
): bigint =>
  escalatedPrice(computeBudgetOf(expired).microLamportsPerCu, deps.priorityFees.capMicroLamportsPerCu);
