import { randomBytes } from 'node:crypto';
import type { Address, TransactionError } from '@solana/kit';
import type { Logger } from 'pino';
import { associatedTokenAccount } from '../chain/earnings.ts';
import { type LandingOutcome, landTransaction } from '../chain/landing.ts';
import { rewardPayoutInstructions, signPayout } from '../chain/reward-payout.ts';
import { isNativeMint, TOKEN_ACCOUNT_SIZE } from '../chain/router/accounts.ts';
import type {
  AccountReader,
  BlockHeightReader,
  BlockhashReader,
  RentReader,
  SignatureStatusReader,
  TransactionSender,
} from '../chain/types.ts';
import type { Clock } from '../domain/clock.ts';
import { AppError } from '../domain/errors.ts';
import type { Owner } from '../domain/integration.ts';
import { planClaim, type RewardBalances, type RewardClaim, type WalletFacts } from '../domain/rewards.ts';
import type { Platform } from '../platform/platform.ts';
import type { Db } from '../store/db.ts';
import type { RewardStore } from '../store/rewards.ts';

/** What creating and paying out claims needs. */
export interface ClaimDeps {
  db: Pick<Db, 'transaction'>;
  rewards: RewardStore;
  chain: AccountReader &
    RentReader &
    BlockhashReader &
    BlockHeightReader &
    SignatureStatusReader &
    TransactionSender;
  /**
   * The router program, its protocol config (which holds the fees the claims pay) and the fee
   * wallet's signer (the config's platform wallet: it signs the withdrawals and pays the payouts).
   */
  platform: Pick<Platform, 'programAddress' | 'configAddress' | 'feeWalletSigner'>;
  clock: Clock;
  /**
   * How long the process that created or took over a claim keeps it before another may take it
   * over (30 s by default, longer than a claim request waits). Resending the same bytes is
   * harmless, so a lease shorter than a blockhash's life only means a pending claim is looked at
   * again sooner.
   */
  leaseMs?: number;
  /** How often a sent payout's status is read (400 ms by default). */
  pollMs?: number;
}

const DEFAULT_LEASE_MS = 30_000;
/** How long a claim request waits for its payout to land before answering it `pending`. */
export const CLAIM_WAIT_MS = 20_000;

/** The caller's rewards with their claimable figures, which a claim must at least meet. */
function assertClaimable(balances: RewardBalances, minimumLamports: bigint): Address {
  if (!balances.wallet) {
    throw new AppError(
      'MH_061',
      'Set a rewards wallet first: POST /api/v1/rewards/wallet { "wallet": ... }.',
    );
  }
  const claimable = balances.lamports.claimable;
  if (claimable < minimumLamports) {
    throw new AppError(
      'MH_060',
      `Claimable rewards are ${claimable} lamports; a claim needs at least ${minimumLamports}.`,
    );
  }
  return balances.wallet;
}

/** What the chain says of the wallet and its token accounts of the mints with claimable tokens. */
async function readWalletFacts(
  chain: ClaimDeps['chain'],
  wallet: Address,
  mints: readonly Address[],
): Promise<WalletFacts> {
  const splMints = mints.filter((mint) => !isNativeMint(mint));
  const tokenAccounts = await Promise.all(splMints.map((mint) => associatedTokenAccount(wallet, mint)));
  const [accounts, tokenAccountRent, walletRentMinimum] = await Promise.all([
    chain.getAccounts([wallet, ...tokenAccounts]),
    chain.getMinimumBalanceForRentExemption(TOKEN_ACCOUNT_SIZE),
    chain.getMinimumBalanceForRentExemption(0),
  ]);
  const [walletAccount, ...tokenAccountInfos] = accounts;
  return {
    walletExists: (walletAccount?.lamports ?? 0n) > 0n,
    missingTokenAccounts: new Set(splMints.filter((_, index) => !tokenAccountInfos[index])),
    tokenAccountRent: BigInt(tokenAccountRent),
    walletRentMinimum: BigInt(walletRentMinimum),
  };
}

/**
 * Creates a claim of everything claimable (MH_061 without a rewards wallet, then MH_060 below
 * `minimumLamports`): plans it against the wallet's accounts on chain, signs its payout with the
 * fee wallet, and in one transaction under the owner's rewards lock stores the claim with the
 * signed bytes and takes its amounts from the balances, before anything is sent. A claim racing
 * another finds nothing claimable left (MH_060). The claim is leased to this process for
 * `leaseMs`: send it with {@link settleClaim}.
 */
export async function createClaim(
  deps: ClaimDeps,
  input: {
    owner: Owner;
    minimumLamports: bigint;
    request: { apiKeyId: number; idempotencyKey: string } | null;
  },
): Promise<RewardClaim> {
  const { owner, minimumLamports } = input;
  const earnings = {
    programAddress: deps.platform.programAddress,
    config: deps.platform.configAddress,
    platformWallet: deps.platform.feeWalletSigner,
  };
  for (let attempt = 1; ; attempt++) {
    const before = await deps.rewards.balances(owner);
    const wallet = assertClaimable(before, minimumLamports);
    const mints = before.tokens.filter((token) => token.claimableRaw > 0n).map((token) => token.mint);
    const [facts, lifetime] = await Promise.all([
      readWalletFacts(deps.chain, wallet, mints),
      deps.chain.getLatestBlockhash(),
    ]);
    const claim = await deps.db.transaction(async (tx) => {
      const now = deps.clock.now();
      const locked = await deps.rewards.lockBalances(tx, owner, now);
      assertClaimable(locked, minimumLamports);
      // The wallet changed since its accounts were read: read them again.
      if (locked.wallet !== wallet) return null;
      // Only mints whose accounts were read are paid; one that accrued since waits for the next claim.
      const tokens = locked.tokens
        .filter((token) => mints.includes(token.mint))
        .map((token) => ({ ...token, native: isNativeMint(token.mint) }));
      const seed = `claim-${randomBytes(12).toString('hex')}`;
      for (let maxMints = tokens.length; ; maxMints--) {
        const plan = planClaim({
          claimableLamports: locked.lamports.claimable,
          tokens,
          facts,
          maxMints: Math.max(maxMints, 1),
        });
        const instructions = await rewardPayoutInstructions({
          earnings,
          wallet,
          plan,
          seed,
          tokenAccountRent: facts.tokenAccountRent,
        });
        const signed = await signPayout(earnings.platformWallet, instructions, lifetime);
        if (!signed) {
          if (maxMints <= 1) throw new Error('a reward payout of one mint does not fit a transaction');
          continue;
        }
        return deps.rewards.insertClaim(tx, owner, {
          wallet,
          plan,
          transaction: signed.base64,
          signature: signed.signature,
          validUntil: signed.validUntil,
          leaseUntil: new Date(now.getTime() + (deps.leaseMs ?? DEFAULT_LEASE_MS)),
          request: input.request,
          now,
        });
      }
    });
    if (claim) return claim;
    if (attempt === 3) throw new AppError('MH_091', 'The rewards wallet is changing. Retry shortly.');
  }
}

/** A transaction error in words, for the claim's record. */
const describe = (error: TransactionError | string) =>
  typeof error === 'string' ? error : JSON.stringify(error);

/**
 * Sends a pending claim's stored transaction (the same bytes every time, so it pays at most once)
 * and waits, until `signal` aborts, for it to be confirmed (the claim becomes `confirmed`) or to
 * fail or expire unlanded (`failed`, its amounts claimable again). Its status is read with the
 * chain's history, so a payout that landed long ago is still found. `firstSend` says no one sent
 * these bytes before: only then does a refusal in preflight prove they will never land. Answers
 * the claim as it then stands.
 */
export async function settleClaim(
  deps: ClaimDeps,
  claim: RewardClaim,
  options: { firstSend: boolean; signal: AbortSignal },
): Promise<RewardClaim> {
  const fail = async (reason: string) =>
    (await deps.rewards.failClaim(claim.id, reason, deps.clock.now())) ?? (await current());
  const current = async () => (await deps.rewards.getClaim(claim.id)) ?? claim;
  let outcome: LandingOutcome;
  try {
    const signed = { base64: claim.transaction, signature: claim.signature, validUntil: claim.validUntil };
    outcome = await landTransaction(deps.chain, signed, {
      now: () => deps.clock.now().getTime(),
      pollMs: deps.pollMs,
      resumed: !options.firstSend,
      signal: options.signal,
    });
  } catch (error) {
    // Stopped waiting: the claim stays pending, leased, for a worker to settle.
    if (options.signal.aborted) return current();
    throw error;
  }
  if (outcome === 'expired') return fail('the payout expired before it landed');
  if (outcome !== null) return fail(`the payout failed on chain: ${describe(outcome)}`);
  return (await deps.rewards.confirmClaim(claim.id, deps.clock.now())) ?? (await current());
}

/**
 * Claim rewards, as the API asks it: a retry of a request whose process died after creating its
 * claim answers that claim; otherwise a new claim is created and sent, and answered once its
 * payout is confirmed or failed, or still `pending` after `waitMs` (or when sending failed: it
 * stays stored and leased, and a worker completes it once the lease lapses).
 */
export async function claimRewards(
  deps: ClaimDeps,
  input: { owner: Owner; minimumLamports: bigint; request: { apiKeyId: number; idempotencyKey: string } },
  options: { waitMs: number; log: Pick<Logger, 'warn'> },
): Promise<RewardClaim> {
  const existing = await deps.rewards.claimOfRequest(input.request.apiKeyId, input.request.idempotencyKey);
  if (existing) return existing;
  const created = await createClaim(deps, input);
  return settleClaim(deps, created, { firstSend: true, signal: AbortSignal.timeout(options.waitMs) }).catch(
    (error: unknown) => {
      options.log.warn(
        { err: error, claimId: created.id },
        'sending a reward claim failed; it stays pending',
      );
      return created;
    },
  );
}

/**
 * Takes over pending claims whose sender's lease lapsed (its process died, or it stopped waiting)
 * and settles each, a batch at a time; answers how many it took over.
 */
export async function resumeClaims(deps: ClaimDeps, options: { limit?: number } = {}): Promise<number> {
  const leaseMs = deps.leaseMs ?? DEFAULT_LEASE_MS;
  const claims = await deps.rewards.takeOverPending(deps.clock.now(), leaseMs, options.limit ?? 16);
  await Promise.all(
    claims.map((claim) =>
      // Stops waiting well within the lease, so no other worker takes the claim meanwhile.
      settleClaim(deps, claim, { firstSend: false, signal: AbortSignal.timeout(leaseMs / 2) }),
    ),
  );
  return claims.length;
}
