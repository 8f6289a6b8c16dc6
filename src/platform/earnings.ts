import { randomBytes } from 'node:crypto';
import type { Address, Signature } from '@solana/kit';
import { type EarningsWithdrawal, earningsWithdrawalInstructions } from '../chain/earnings.ts';
import { TOKEN_ACCOUNT_SIZE } from '../chain/router/accounts.ts';
import type { BalanceReader, RentReader, TokenAccountReader } from '../chain/types.ts';
import { AppError } from '../domain/errors.ts';
import type { Db } from '../store/db.ts';
import type { RewardStore } from '../store/rewards.ts';
import { heldEarnings } from '../use-cases/coverage.ts';
import type { Platform } from './platform.ts';
import { PlatformTransactionError, sendAndConfirm, type TransactionChain } from './send.ts';

/** What withdrawing the platform's own earnings needs. */
export interface EarningsDeps {
  db: Pick<Db, 'transaction'>;
  rewards: Pick<RewardStore, 'reserved' | 'lockEarnings'>;
  chain: BalanceReader & TokenAccountReader & RentReader & TransactionChain;
  platform: Pick<Platform, 'programAddress' | 'configAddress' | 'feeWalletSigner'>;
  pollMs?: number;
}

/** A confirmed withdrawal of the platform's earnings. */
export interface EarningsWithdrawalResult extends EarningsWithdrawal {
  signature: Signature;
  destination: Address;
  message: string;
}

/**
 * Why `amount` of an asset cannot be withdrawn, or null when it can: `held` is what the platform's
 * earnings hold of it (`holds` says where, in words), `reserved` what integrators are owed of it.
 */
function excess(
  what: { amount: bigint; unit: string; holds: string },
  held: bigint,
  reserved: bigint,
): string | null {
  if (what.amount === 0n || what.amount <= held - reserved) return null;
  const most = held > reserved ? held - reserved : 0n;
  return `Withdrawing ${what.amount} ${what.unit} would take what integrators are owed: ${what.holds} ${held}, ${reserved} of them integrators' (claimable, in pending claims, or their shares of routes still under way); at most ${most} can be withdrawn.`;
}

/** Amounts of lamports and of each mint's tokens. */
interface Amounts {
  lamports: bigint;
  tokens: ReadonlyMap<Address, bigint>;
}

/**
 * Refuses (MH_016) a withdrawal that would take what integrators are owed: `held` is what the
 * config holds of each asset, `reserved` what integrators are owed of it.
 */
function refuseExcess(
  withdrawal: EarningsWithdrawal,
  config: Address,
  held: Amounts,
  reserved: Amounts,
): void {
  const { tokens } = withdrawal;
  const refusals: [string, string][] = [];
  const lamports = excess(
    {
      amount: withdrawal.lamports,
      unit: 'lamports',
      holds: `the protocol config ${config} holds, above its rent-exempt minimum,`,
    },
    held.lamports,
    reserved.lamports,
  );
  if (lamports) refusals.push(['lamports', lamports]);
  if (tokens) {
    const refusal = excess(
      {
        amount: tokens.amountRaw,
        unit: `raw units of ${tokens.mint}`,
        holds: `the config's token account of that mint holds`,
      },
      held.tokens.get(tokens.mint) ?? 0n,
      reserved.tokens.get(tokens.mint) ?? 0n,
    );
    if (refusal) refusals.push(['amountRaw', refusal]);
  }
  if (refusals.length > 0) {
    throw new AppError('MH_016', refusals.map(([, message]) => message).join(' '), {
      param: refusals[0]![0],
    });
  }
}

/** A withdrawal in words: its lamports and its tokens. */
function describeWithdrawal(withdrawal: EarningsWithdrawal): string {
  return [
    ...(withdrawal.lamports > 0n ? [`${withdrawal.lamports} lamports`] : []),
    ...(withdrawal.tokens ? [`${withdrawal.tokens.amountRaw} raw units of ${withdrawal.tokens.mint}`] : []),
  ].join(' and ');
}

/**
 * Withdraws the platform's own earnings to `destination` (a wallet): `lamports` from the protocol
 * config, and `tokens` of one mint from the config's token account of it (into the destination's
 * associated token account, created when missing; the native mint's as SOL), in one transaction
 * signed and paid by the fee wallet, and waits for its confirmation. Refuses (MH_016) an amount
 * that would leave the config holding less than integrators are owed, counting their shares of
 * routes still under way, and names the most that may be withdrawn. Withdrawals run one at a time
 * under the earnings lock, held until the transaction is confirmed, fails or can no longer land;
 * the ledger is read before the chain, so a claim paid or a route settled in between never makes
 * the check looser.
 */
export async function withdrawEarnings(
  deps: EarningsDeps,
  input: EarningsWithdrawal & { destination: Address },
): Promise<EarningsWithdrawalResult> {
  const { platform } = deps;
  const config = platform.configAddress;
  if (input.destination === config) {
    throw new AppError('MH_016', 'The destination cannot be the protocol config, which holds the earnings.', {
      param: 'destination',
    });
  }
  return deps.db.transaction(async (tx) => {
    await deps.rewards.lockEarnings(tx);
    const reserved = await deps.rewards.reserved(tx);
    const { tokens } = input;
    const [held, tokenAccountRent] = await Promise.all([
      heldEarnings(deps.chain, config, tokens ? [tokens.mint] : []),
      deps.chain.getMinimumBalanceForRentExemption(TOKEN_ACCOUNT_SIZE),
    ]);
    refuseExcess(input, config, held, reserved);

    const earnings = {
      programAddress: platform.programAddress,
      config,
      platformWallet: platform.feeWalletSigner,
    };
    const instructions = await earningsWithdrawalInstructions(earnings, {
      destination: input.destination,
      withdrawal: { lamports: input.lamports, tokens },
      seed: `withdraw-${randomBytes(11).toString('hex')}`,
      tokenAccountRent: BigInt(tokenAccountRent),
    });
    let signature: Signature;
    try {
      signature = await sendAndConfirm(deps.chain, platform.feeWalletSigner, instructions, {
        pollMs: deps.pollMs,
      });
    } catch (error) {
      if (!(error instanceof PlatformTransactionError)) throw error;
      throw new AppError('MH_016', `Nothing was withdrawn: ${error.message}.`, { cause: error });
    }
    return {
      signature,
      destination: input.destination,
      lamports: input.lamports,
      tokens,
      message: `Withdrew ${describeWithdrawal(input)} of the platform's earnings to ${input.destination}, in transaction ${signature}.`,
    };
  });
}
