// The transaction that pays a reward claim out of the platform's earnings, which the router program
// holds in the protocol config: its lamports, and each mint's tokens from the config's token
// account of that mint.
import {
  type Address,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  type Instruction,
  isTransactionMessageWithinSizeLimit,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type TransactionSigner,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import type { ClaimPlan } from '../domain/rewards.ts';
import {
  type EarningsAccounts,
  memoInstruction,
  unwrapEarningsInstructions,
  withdrawLamportsInstruction,
  withdrawTokensToWalletInstructions,
} from './earnings.ts';
import type { BlockhashLifetime } from './types.ts';

/**
 * The instructions of a claim's payout, signed by the platform wallet (the fee wallet) alone:
 * - `WithdrawLamports` of `plan.lamports` from the config into the fee wallet, first, so that the
 *   fee wallet pays what follows with the integrator's lamports;
 * - per SPL mint: create the wallet's token account when the plan says it is missing (not the
 *   idempotent form: if it appeared meanwhile the payout fails whole and the claim's amounts
 *   return, rather than paying rent that was not spent), then `WithdrawTokens` from the config's
 *   token account straight into it;
 * - the native mint: `WithdrawTokens` of its wrapped SOL into a token account created for this
 *   claim (an address derived from the fee wallet and `seed`), which is closed into the fee wallet
 *   at once, unwrapping it;
 * - one SOL transfer to the wallet of `plan.walletLamports` (the claimed lamports less the rent
 *   spent, plus the unwrapped native share).
 * The fee wallet thus ends as it started but for the network fee, and the config's lamports fall by
 * exactly `plan.lamports`. A memo naming the claim's `seed` makes every claim's transaction unique:
 * a claim repeating a failed one within a blockhash's lifetime would otherwise be the same bytes,
 * which the chain refuses.
 */
export async function rewardPayoutInstructions(input: {
  earnings: EarningsAccounts;
  wallet: Address;
  plan: ClaimPlan;
  /** Unique per claim (at most 32 characters): names the claim's memo and unwrap account. */
  seed: string;
  tokenAccountRent: bigint;
}): Promise<Instruction[]> {
  const { earnings, wallet, plan } = input;
  const feeWallet = earnings.platformWallet;
  const instructions: Instruction[] = [memoInstruction(`Transfer Router reward ${input.seed}`)];
  if (plan.lamports > 0n)
    instructions.push(withdrawLamportsInstruction(earnings, feeWallet.address, plan.lamports));
  for (const token of plan.tokens) {
    instructions.push(
      ...(token.native
        ? await unwrapEarningsInstructions(earnings, {
            amount: token.amountRaw,
            seed: input.seed,
            tokenAccountRent: input.tokenAccountRent,
          })
        : await withdrawTokensToWalletInstructions(earnings, {
            mint: token.mint,
            amount: token.amountRaw,
            wallet,
            account: token.createAccount ? 'create' : 'exists',
          })),
    );
  }
  if (plan.walletLamports > 0n) {
    instructions.push(
      getTransferSolInstruction({ source: feeWallet, destination: wallet, amount: plan.walletLamports }),
    );
  }
  return instructions;
}

/** A payout transaction signed by the fee wallet, or null when it would exceed the size limit. */
export async function signPayout(
  feeWallet: TransactionSigner,
  instructions: readonly Instruction[],
  lifetime: BlockhashLifetime,
): Promise<{ base64: string; signature: string; validUntil: bigint } | null> {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (draft) => setTransactionMessageFeePayerSigner(feeWallet, draft),
    (draft) => setTransactionMessageLifetimeUsingBlockhash(lifetime, draft),
    (draft) => appendTransactionMessageInstructions(instructions, draft),
  );
  if (!isTransactionMessageWithinSizeLimit(message)) return null;
  const transaction = await signTransactionMessageWithSigners(message);
  return {
    base64: getBase64EncodedWireTransaction(transaction),
    signature: getSignatureFromTransaction(transaction),
    validUntil: lifetime.lastValidBlockHeight,
  };
}
