// The instructions that move the platform's earnings out of the protocol config.
import {
  type Address,
  getStructEncoder,
  getU64Encoder,
  type Instruction,
  padRightEncoder,
  type TransactionSigner,
} from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { ROUTER_PROGRAM_ADDRESS } from '../program.ts';
import { instruction, RouterInstruction, readonly, signerMeta, u8, writable } from './encoding.ts';

const withdrawEncoder = getStructEncoder([
  ['tag', padRightEncoder(u8, 7)],
  ['amount', getU64Encoder()],
]);

/**
 * Moves `amount` lamports of the platform's earnings out of the config account (which keeps its
 * rent-exempt minimum); signed by the config's platform wallet.
 */
export function getWithdrawLamportsInstruction(
  input: { platformWallet: TransactionSigner; config: Address; destination: Address; amount: bigint },
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Instruction {
  return instruction(
    programAddress,
    [signerMeta(input.platformWallet, false), writable(input.config), writable(input.destination)],
    new Uint8Array(withdrawEncoder.encode({ tag: RouterInstruction.WithdrawLamports, amount: input.amount })),
  );
}

/**
 * Moves `amount` tokens of the platform's earnings out of a token account the config owns (`vault`,
 * its associated token account of the mint) into `destination`; signed by the platform wallet.
 */
export function getWithdrawTokensInstruction(
  input: {
    platformWallet: TransactionSigner;
    config: Address;
    vault: Address;
    destination: Address;
    amount: bigint;
  },
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Instruction {
  return instruction(
    programAddress,
    [
      signerMeta(input.platformWallet, false),
      readonly(input.config),
      writable(input.vault),
      writable(input.destination),
      readonly(TOKEN_PROGRAM_ADDRESS),
    ],
    new Uint8Array(withdrawEncoder.encode({ tag: RouterInstruction.WithdrawTokens, amount: input.amount })),
  );
}
