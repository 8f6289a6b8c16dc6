import type { Address } from '@solana/kit';
import { associatedTokenAccount } from '../chain/earnings.ts';
import { CONFIG_ACCOUNT_SIZE } from '../chain/router/accounts.ts';
import type { BalanceReader, RentReader, TokenAccountReader } from '../chain/types.ts';
import type { RewardStore } from '../store/rewards.ts';

/** What the platform owes integrators of one asset, what its earnings hold of it, and the gap. */
export interface CoverageLine {
  /** `lamports`, or a mint (raw units). */
  asset: 'lamports' | Address;
  owed: bigint;
  held: bigint;
  /** `owed - held` when the platform holds less, else 0. */
  shortfall: bigint;
}

/** What the platform's earnings hold: the config's lamports above its rent-exempt minimum, and per mint its token account's balance. */
export async function heldEarnings(
  chain: BalanceReader & TokenAccountReader & RentReader,
  config: Address,
  mints: readonly Address[],
): Promise<{ lamports: bigint; tokens: Map<Address, bigint> }> {
  const [balance, reserve, tokens] = await Promise.all([
    chain.getBalance(config),
    chain.getMinimumBalanceForRentExemption(CONFIG_ACCOUNT_SIZE),
    Promise.all(
      mints.map(async (mint) => {
        const account = await chain.getTokenAccount(await associatedTokenAccount(config, mint));
        return [mint, account?.amount ?? 0n] as const;
      }),
    ),
  ]);
  const spendable = BigInt(balance) - BigInt(reserve);
  return { lamports: spendable > 0n ? spendable : 0n, tokens: new Map(tokens) };
}

/**
 * Whether the platform's earnings can pay every integrator what it is owed: the protocol config's
 * lamports above its own rent-exempt minimum against the lamports owed, and its token account of
 * each mint against that mint's amounts (the native mint's too, held as wrapped SOL). Claims
 * withdraw from those accounts, and nothing else can (docs/program.md).
 */
export async function rewardCoverage(deps: {
  rewards: Pick<RewardStore, 'owed'>;
  chain: BalanceReader & TokenAccountReader & RentReader;
  /** The protocol config PDA. */
  config: Address;
}): Promise<CoverageLine[]> {
  const owed = await deps.rewards.owed();
  const held = await heldEarnings(deps.chain, deps.config, [...owed.tokens.keys()]);
  const line = (asset: CoverageLine['asset'], owing: bigint, holding: bigint): CoverageLine => ({
    asset,
    owed: owing,
    held: holding,
    shortfall: owing > holding ? owing - holding : 0n,
  });
  return [
    line('lamports', owed.lamports, held.lamports),
    ...[...owed.tokens].map(([mint, owing]) => line(mint, owing, held.tokens.get(mint) ?? 0n)),
  ];
}
