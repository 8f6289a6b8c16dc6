import type { Address } from '@solana/kit';

/**
 * Integrator rewards: the integrator's shares of settled transfers, accrued per integration and
 * mode, and the claims that pay what is claimable to the integration's rewards wallet.
 */

/** `REWARDS_MIN_CLAIM_LAMPORTS` unless configured otherwise (decisions: 1,000,000). */
export const DEFAULT_MIN_CLAIM_LAMPORTS = 1_000_000n;

/**
 * The smallest minimum a deployment or an integration may set: the rent-exempt minimum of an
 * empty wallet, so that a claim's lamports can always open a wallet that does not exist yet.
 */
export const MIN_CLAIM_FLOOR_LAMPORTS = 890_880n;

/** The least claimable lamports of a claim: the integration's setting, else the deployment's. */
export function minimumClaimLamports(
  settings: { minimumClaimLamports?: number | undefined },
  deploymentMinimum: bigint,
): bigint {
  return settings.minimumClaimLamports === undefined
    ? deploymentMinimum
    : BigInt(settings.minimumClaimLamports);
}

/** A balance: what accrued, what claims took (pending or confirmed), and what is left to claim. */
export interface LamportBalance {
  accrued: bigint;
  claimed: bigint;
  claimable: bigint;
}

/** The percentage fee shares of one mint, raw units. */
export interface TokenBalance {
  mint: Address;
  accruedRaw: bigint;
  claimedRaw: bigint;
  claimableRaw: bigint;
}

/** An owner's rewards: its wallet and balances. */
export interface RewardBalances {
  wallet: Address | null;
  lamports: LamportBalance;
  /** Ordered by mint. */
  tokens: TokenBalance[];
}

export type ClaimStatus = 'pending' | 'confirmed' | 'failed';

/** An amount of one mint a claim pays. */
export interface ClaimToken {
  mint: Address;
  amountRaw: bigint;
}

/** A claim as it is stored. */
export interface RewardClaim {
  id: number;
  integrationId: number;
  mode: 'test' | 'live';
  status: ClaimStatus;
  wallet: Address;
  /** What left the lamport balance; `rentLamports` of it opened the wallet's token accounts. */
  lamports: bigint;
  rentLamports: bigint;
  tokens: ClaimToken[];
  /** The signed transaction (base64) and its signature, stored before it was first sent. */
  transaction: string;
  signature: string;
  /** The last block height at which the transaction can land. */
  validUntil: bigint;
  lastError: string | null;
  createdAt: Date;
  confirmedAt: Date | null;
}

/** What the chain says about the wallet, as far as a claim's plan depends on it. */
export interface WalletFacts {
  /** The wallet's system account holds lamports (a transfer of any amount may credit it). */
  walletExists: boolean;
  /** Mints whose token account of the wallet is missing. */
  missingTokenAccounts: ReadonlySet<string>;
  /** Rent of a token account, which the claim pays to create a missing one. */
  tokenAccountRent: bigint;
  /** Rent-exempt minimum of an empty account: what a transfer must bring to a missing wallet. */
  walletRentMinimum: bigint;
}

/** One token of a planned claim: how much, whether the wallet's account must be created, and whether it is SOL. */
export interface PlannedToken extends ClaimToken {
  createAccount: boolean;
  native: boolean;
}

/** What a claim pays: `lamports` leave the balance, the wallet receives `walletLamports` plus any native share. */
export interface ClaimPlan {
  lamports: bigint;
  rentLamports: bigint;
  tokens: PlannedToken[];
  /** Lamports the wallet receives in one transfer: `lamports - rentLamports` plus the native mint's share. */
  walletLamports: bigint;
}

/**
 * Plans a claim of everything claimable (decisions, "Integrator rewards"): all the lamports; every
 * mint whose wallet token account exists; a mint whose account is missing only while the
 * lamports left cover its rent (and leave a missing wallet at least rent exempt), otherwise it
 * stays claimable. The native mint's share is paid as SOL and needs no account. At most
 * `maxMints` (at least 1) mints, since a transaction holds only so many: the native mint first,
 * then in mint order.
 */
export function planClaim(input: {
  claimableLamports: bigint;
  tokens: readonly { mint: Address; claimableRaw: bigint; native: boolean }[];
  facts: WalletFacts;
  maxMints?: number;
}): ClaimPlan {
  const { facts } = input;
  const lamports = input.claimableLamports;
  // The native mint first: it needs no account, so a claim limited in mints always pays it.
  const candidates = input.tokens
    .filter((token) => token.claimableRaw > 0n)
    .sort((a, b) => Number(b.native) - Number(a.native) || (a.mint < b.mint ? -1 : a.mint > b.mint ? 1 : 0));
  const nativeRaw = candidates[0]?.native ? candidates[0].claimableRaw : 0n;
  const tokens: PlannedToken[] = [];
  let rentLamports = 0n;
  const viable = (rent: bigint) => {
    const paid = lamports - rent + nativeRaw;
    return lamports >= rent && (facts.walletExists || paid === 0n || paid >= facts.walletRentMinimum);
  };
  for (const token of candidates) {
    if (tokens.length === (input.maxMints ?? Number.POSITIVE_INFINITY)) break;
    const createAccount = !token.native && facts.missingTokenAccounts.has(token.mint);
    if (createAccount) {
      if (!viable(rentLamports + facts.tokenAccountRent)) continue;
      rentLamports += facts.tokenAccountRent;
    }
    tokens.push({ mint: token.mint, amountRaw: token.claimableRaw, createAccount, native: token.native });
  }
  const paidNative = tokens.find((token) => token.native)?.amountRaw ?? 0n;
  return { lamports, rentLamports, tokens, walletLamports: lamports - rentLamports + paidNative };
}

/** What a settled route paid in fees, as the route on chain shows it. */
export interface FeesPaid {
  /** Both shares of the percentage fee, raw units of the route's mint. */
  percentFeeRaw: bigint;
  /** Both shares of the flat fee. */
  flatFeeLamports: bigint;
}

/** The integrator's shares of a settled transfer: percentage fee (raw units) and flat fee. */
export interface IntegratorShares {
  percentShareRaw: bigint;
  flatShareLamports: bigint;
}

/**
 * The integrator's shares of what a settled route actually paid: the quoted shares when it paid
 * the quoted fees (as every route the service verified does), else the same proportion of what it
 * paid, rounded down, and never more than quoted: the ledger credits no fee nobody paid.
 */
export function integratorSharesOfPaid(
  quoted: {
    percentFeeRaw: bigint;
    integratorPercentShareRaw: bigint;
    totalFlatFeeLamports: bigint;
    integratorFlatShareLamports: bigint;
  },
  paid: FeesPaid,
): IntegratorShares {
  const scaled = (share: bigint, total: bigint, actual: bigint) =>
    actual >= total ? share : total === 0n ? 0n : (share * actual) / total;
  return {
    percentShareRaw: scaled(quoted.integratorPercentShareRaw, quoted.percentFeeRaw, paid.percentFeeRaw),
    flatShareLamports: scaled(
      quoted.integratorFlatShareLamports,
      quoted.totalFlatFeeLamports,
      paid.flatFeeLamports,
    ),
  };
}
