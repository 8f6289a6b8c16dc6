import type { Address } from '@solana/kit';
import { walletTokenAccount } from '../chain/reward-payout.ts';
import type { BalanceReader, RentReader, TokenAccountReader } from '../chain/types.ts';
import type { RewardStore } from '../store/rewards.ts';

/** What the platform owes integrators of one asset, what its fee accounts hold of it, and the gap. */
export interface CoverageLine {
  /** `lamports`, or a mint (raw units). */
  asset: 'lamports' | Address;
  owed: bigint;
  held: bigint;
  /** `owed - held` when the platform holds less, else 0. */
  shortfall: bigint;
}

/**
 * Whether the platform's fee accounts can pay every integrator what it is owed: the fee wallet's
 * lamports above its own rent-exempt minimum against the lamports owed, and its token account
 * of each mint against that mint's amounts (the native mint's too, held as wrapped SOL).
 */
export async function rewardCoverage(deps: {
  rewards: Pick<RewardStore, 'owed'>;
  chain: BalanceReader & TokenAccountReader & RentReader;
  feeWallet: Address;
}): Promise<CoverageLine[]> {
  const [owed, balance, reserve] = await Promise.all([
    deps.rewards.owed(),
    deps.chain.getBalance(deps.feeWallet),
    deps.chain.getMinimumBalanceForRentExemption(0),
  ]);
  const line = (asset: CoverageLine['asset'], owing: bigint, held: bigint): CoverageLine => ({
    asset,
    owed: owing,
    held,
    shortfall: owing > held ? owing - held : 0n,
  });
  const spendable = BigInt(balance) - BigInt(reserve);
  const tokens = await Promise.all(
    [...owed.tokens].map(async ([mint, owing]) => {
      const account = await deps.chain.getTokenAccount(await walletTokenAccount(deps.feeWallet, mint));
      return line(mint, owing, account?.amount ?? 0n);
    }),
  );
  return [line('lamports', owed.lamports, spendable > 0n ? spendable : 0n), ...tokens];
}
