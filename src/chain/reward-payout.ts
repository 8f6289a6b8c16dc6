// The transaction that pays a reward claim out of the platform's fee accounts: the fee wallet's
// lamports, and each mint's tokens from the fee wallet's associated token account of that mint.
import {
  type Address,
  address,
  appendTransactionMessageInstructions,
  createAddressWithSeed,
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
import { getCreateAccountWithSeedInstruction, getTransferSolInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCloseAccountInstruction,
  getCreateAssociatedTokenInstruction,
  getInitializeAccount3Instruction,
  getTransferInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import type { ClaimPlan } from '../domain/rewards.ts';
import { NATIVE_MINT_ADDRESS, TOKEN_ACCOUNT_SIZE } from './router/accounts.ts';
import type { BlockhashLifetime } from './types.ts';

/** SPL Memo (v3), deployed on every cluster. */
const MEMO_PROGRAM_ADDRESS = address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');

const ata = async (owner: Address, mint: Address) =>
  (await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];

/** The wallet's associated token account of a mint (SPL Token; the router takes no Token-2022 mint). */
export const walletTokenAccount = ata;

/**
 * The instructions of a claim's payout, signed by the fee wallet alone:
 * - per SPL mint: create the wallet's token account when the plan says it is missing (not the
 *   idempotent form: if it appeared meanwhile the payout fails whole and the claim's amounts
 *   return, rather than paying rent that was not spent), then transfer from the fee account;
 * - the native mint: its wrapped SOL moves from the fee account into a token account created for
 *   this claim (an address derived from the fee wallet and `seed`), which is closed back into the
 *   fee wallet at once, unwrapping it;
 * - one SOL transfer to the wallet of `plan.walletLamports` (the claimed lamports less the rent
 *   spent, plus the unwrapped native share).
 * The fee wallet's lamports thus fall by exactly `plan.lamports` (and the network fee). A memo
 * naming the claim's `seed` makes every claim's transaction unique: a claim repeating a failed
 * one within a blockhash's lifetime would otherwise be the same bytes, which the chain refuses.
 */
export async function rewardPayoutInstructions(input: {
  feeWallet: TransactionSigner;
  wallet: Address;
  plan: ClaimPlan;
  /** Unique per claim (at most 32 characters): names the claim's memo and unwrap account. */
  seed: string;
  tokenAccountRent: bigint;
}): Promise<Instruction[]> {
  const { feeWallet, wallet, plan } = input;
  const instructions: Instruction[] = [
    {
      programAddress: MEMO_PROGRAM_ADDRESS,
      data: new TextEncoder().encode(`Transfer Router reward ${input.seed}`),
    },
  ];
  for (const token of plan.tokens) {
    const source = await ata(feeWallet.address, token.mint);
    if (token.native) {
      const unwrap = await createAddressWithSeed({
        baseAddress: feeWallet.address,
        programAddress: TOKEN_PROGRAM_ADDRESS,
        seed: input.seed,
      });
      instructions.push(
        getCreateAccountWithSeedInstruction({
          payer: feeWallet,
          newAccount: unwrap,
          base: feeWallet.address,
          seed: input.seed,
          amount: input.tokenAccountRent,
          space: TOKEN_ACCOUNT_SIZE,
          programAddress: TOKEN_PROGRAM_ADDRESS,
        }),
        getInitializeAccount3Instruction({
          account: unwrap,
          mint: NATIVE_MINT_ADDRESS,
          owner: feeWallet.address,
        }),
        getTransferInstruction({
          source,
          destination: unwrap,
          authority: feeWallet,
          amount: token.amountRaw,
        }),
        getCloseAccountInstruction({ account: unwrap, destination: feeWallet.address, owner: feeWallet }),
      );
      continue;
    }
    const destination = await ata(wallet, token.mint);
    if (token.createAccount) {
      instructions.push(
        getCreateAssociatedTokenInstruction({
          payer: feeWallet,
          ata: destination,
          owner: wallet,
          mint: token.mint,
        }),
      );
    }
    instructions.push(
      getTransferInstruction({ source, destination, authority: feeWallet, amount: token.amountRaw }),
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
