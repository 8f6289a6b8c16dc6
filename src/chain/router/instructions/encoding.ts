// What every instruction of the router program is built from: its tag, its accounts' roles and its
// data's encoders.
import {
  type AccountMeta,
  AccountRole,
  type AccountSignerMeta,
  type Address,
  getAddressEncoder,
  getU8Encoder,
  type Instruction,
  type TransactionSigner,
} from '@solana/kit';

/** The first byte of each instruction's data. */
export const RouterInstruction = {
  InitConfig: 0,
  UpdateConfig: 1,
  InitOrchestrator: 2,
  CreateRoute: 3,
  AddHops: 4,
  InitSteps: 5,
  ScreenRoute: 6,
  ExecuteStep: 7,
  MarkFailed: 8,
  Rescue: 9,
  Reclaim: 10,
  CloseOrchestrator: 11,
  WithdrawLamports: 12,
  WithdrawTokens: 13,
} as const;

/** A signing account (writable unless told otherwise); the instruction carries its signer. */
export const signerMeta = (signer: TransactionSigner, writable = true): AccountSignerMeta => ({
  address: signer.address,
  role: writable ? AccountRole.WRITABLE_SIGNER : AccountRole.READONLY_SIGNER,
  signer,
});
export const writable = (a: Address): AccountMeta => ({ address: a, role: AccountRole.WRITABLE });
export const readonly = (a: Address): AccountMeta => ({ address: a, role: AccountRole.READONLY });

export function instruction(
  programAddress: Address,
  accounts: (AccountMeta | AccountSignerMeta)[],
  data: Uint8Array,
): Instruction {
  return { programAddress, accounts, data };
}

/** Instruction data made of a tag and one-byte arguments. */
export const bytes = (...values: number[]) => new Uint8Array(values);

export const u8 = getU8Encoder();
export const addressEncoder = getAddressEncoder();
