// The platform's earnings as the router program holds them: lamports in the protocol config account
// above its rent-exempt minimum, and tokens in the config's associated token account of each mint
// (docs/program.md, "Where the platform's fees go"). Only `WithdrawLamports` and `WithdrawTokens`,
// signed by the config's platform wallet, move them; these build what claims and the platform's
// own withdrawals send.
import {
  type Address,
  address,
  createAddressWithSeed,
  type Instruction,
  type TransactionSigner,
} from '@solana/kit';
import { getCreateAccountWithSeedInstruction, getTransferSolInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCloseAccountInstruction,
  getCreateAssociatedTokenIdempotentInstruction,
  getCreateAssociatedTokenInstruction,
  getInitializeAccount3Instruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { isNativeMint, NATIVE_MINT_ADDRESS, TOKEN_ACCOUNT_SIZE } from './router/accounts.ts';
import { getWithdrawLamportsInstruction, getWithdrawTokensInstruction } from './router/instructions.ts';

/** SPL Memo (v3), deployed on every cluster. */
const MEMO_PROGRAM_ADDRESS = address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');

/**
 * The associated token account of a mint for `owner`, a wallet or the config (SPL Token; the router
 * takes no Token-2022 mint).
 */
export async function associatedTokenAccount(owner: Address, mint: Address): Promise<Address> {
  return (await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];
}

/** Where the earnings are and who may move them. */
export interface EarningsAccounts {
  /** The router program. */
  programAddress: Address;
  /** The protocol config PDA: holds the lamports and owns the token accounts. */
  config: Address;
  /** The config's platform wallet (the service's fee key): signs withdrawals and pays what they create. */
  platformWallet: TransactionSigner;
}

/** A memo that makes a transaction's bytes unique, e.g. a claim repeating a failed one. */
export function memoInstruction(text: string): Instruction {
  return { programAddress: MEMO_PROGRAM_ADDRESS, data: new TextEncoder().encode(text) };
}

/** Withdraws `amount` lamports of the earnings from the config into `destination`. */
export function withdrawLamportsInstruction(
  earnings: EarningsAccounts,
  destination: Address,
  amount: bigint,
): Instruction {
  return getWithdrawLamportsInstruction(
    { platformWallet: earnings.platformWallet, config: earnings.config, destination, amount },
    earnings.programAddress,
  );
}

/**
 * Withdraws `amount` tokens of an SPL mint from the config's token account of the mint into the
 * wallet's associated token account. `account` says whether that account is there (`exists`), must
 * be created (`create`: the transaction fails if it appeared meanwhile) or is created when missing
 * (`create-if-missing`); the platform wallet pays its rent.
 */
export async function withdrawTokensToWalletInstructions(
  earnings: EarningsAccounts,
  input: {
    mint: Address;
    amount: bigint;
    wallet: Address;
    account: 'exists' | 'create' | 'create-if-missing';
  },
): Promise<Instruction[]> {
  const { mint, wallet } = input;
  const [vault, destination] = await Promise.all([
    associatedTokenAccount(earnings.config, mint),
    associatedTokenAccount(wallet, mint),
  ]);
  const accounts = { payer: earnings.platformWallet, ata: destination, owner: wallet, mint };
  const create =
    input.account === 'create'
      ? [getCreateAssociatedTokenInstruction(accounts)]
      : input.account === 'create-if-missing'
        ? [getCreateAssociatedTokenIdempotentInstruction(accounts)]
        : [];
  return [
    ...create,
    getWithdrawTokensInstruction(
      {
        platformWallet: earnings.platformWallet,
        config: earnings.config,
        vault,
        destination,
        amount: input.amount,
      },
      earnings.programAddress,
    ),
  ];
}

/**
 * Withdraws `amount` of the native mint's earnings (wrapped SOL) into the platform wallet as SOL:
 * a token account made for this transaction (at an address derived from the platform wallet and
 * `seed`, unique per transaction, at most 32 characters) receives them and is closed into the
 * platform wallet at once. The platform wallet lends that account's rent, `tokenAccountRent`, for
 * the moment between its creation and its closing, so its lamports rise by exactly `amount`.
 */
export async function unwrapEarningsInstructions(
  earnings: EarningsAccounts,
  input: { amount: bigint; seed: string; tokenAccountRent: bigint },
): Promise<Instruction[]> {
  const wallet = earnings.platformWallet;
  const [vault, unwrap] = await Promise.all([
    associatedTokenAccount(earnings.config, NATIVE_MINT_ADDRESS),
    createAddressWithSeed({
      baseAddress: wallet.address,
      programAddress: TOKEN_PROGRAM_ADDRESS,
      seed: input.seed,
    }),
  ]);
  return [
    getCreateAccountWithSeedInstruction({
      payer: wallet,
      newAccount: unwrap,
      base: wallet.address,
      seed: input.seed,
      amount: input.tokenAccountRent,
      space: TOKEN_ACCOUNT_SIZE,
      programAddress: TOKEN_PROGRAM_ADDRESS,
    }),
    getInitializeAccount3Instruction({ account: unwrap, mint: NATIVE_MINT_ADDRESS, owner: wallet.address }),
    getWithdrawTokensInstruction(
      {
        platformWallet: wallet,
        config: earnings.config,
        vault,
        destination: unwrap,
        amount: input.amount,
      },
      earnings.programAddress,
    ),
    getCloseAccountInstruction({ account: unwrap, destination: wallet.address, owner: wallet }),
  ];
}

/** What one withdrawal of the platform's own earnings takes out: lamports, and one mint's tokens. */
export interface EarningsWithdrawal {
  lamports: bigint;
  tokens: { mint: Address; amountRaw: bigint } | null;
}

/**
 * The instructions of a withdrawal of the platform's earnings to `destination`, signed and paid by
 * the platform wallet: the lamports straight from the config; an SPL mint's tokens into the
 * destination's associated token account (created when missing, its rent paid by the platform
 * wallet); the native mint's as SOL, unwrapped through the platform wallet and sent on. A memo
 * naming `seed` (unique per withdrawal) keeps two equal withdrawals apart.
 */
export async function earningsWithdrawalInstructions(
  earnings: EarningsAccounts,
  input: {
    destination: Address;
    withdrawal: EarningsWithdrawal;
    seed: string;
    tokenAccountRent: bigint;
  },
): Promise<Instruction[]> {
  const { destination, withdrawal } = input;
  const instructions = [memoInstruction(`Transfer Router platform withdrawal ${input.seed}`)];
  if (withdrawal.lamports > 0n)
    instructions.push(withdrawLamportsInstruction(earnings, destination, withdrawal.lamports));
  const tokens = withdrawal.tokens;
  if (tokens && tokens.amountRaw > 0n) {
    if (isNativeMint(tokens.mint)) {
      instructions.push(
        ...(await unwrapEarningsInstructions(earnings, {
          amount: tokens.amountRaw,
          seed: input.seed,
          tokenAccountRent: input.tokenAccountRent,
        })),
        getTransferSolInstruction({ source: earnings.platformWallet, destination, amount: tokens.amountRaw }),
      );
    } else {
      instructions.push(
        ...(await withdrawTokensToWalletInstructions(earnings, {
          mint: tokens.mint,
          amount: tokens.amountRaw,
          wallet: destination,
          account: 'create-if-missing',
        })),
      );
    }
  }
  return instructions;
}
