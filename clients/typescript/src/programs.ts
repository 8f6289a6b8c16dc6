import {
  AccountRole,
  type AccountSignerMeta,
  type Address,
  address,
  getAddressEncoder,
  getProgramDerivedAddress,
  getU32Encoder,
  getU64Encoder,
  type Instruction,
  type TransactionSigner,
} from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from './router.ts';

/*
 * The few instructions of the System, SPL Token, Associated Token and Compute Budget programs that
 * a recovery sends, encoded by hand: this package depends on @solana/kit alone.
 */

const SYSTEM_PROGRAM_ADDRESS = address('11111111111111111111111111111111');
const ASSOCIATED_TOKEN_PROGRAM_ADDRESS = address('ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL');
const COMPUTE_BUDGET_PROGRAM_ADDRESS = address('ComputeBudget111111111111111111111111111111');
/** An SPL Token account's size. */
export const TOKEN_ACCOUNT_SIZE = 165n;
/** The native mint: a route on it moves wrapped SOL. */
export const NATIVE_MINT_ADDRESS = address('So11111111111111111111111111111111111111112');

const addressBytes = getAddressEncoder();
const u64 = getU64Encoder();
const signerMeta = (signer: TransactionSigner): AccountSignerMeta => ({
  address: signer.address,
  role: AccountRole.WRITABLE_SIGNER,
  signer,
});
const writable = (account: Address) => ({ address: account, role: AccountRole.WRITABLE });
const readonly = (account: Address) => ({ address: account, role: AccountRole.READONLY });

/** The associated token account of `owner` for `mint` (SPL Token). */
export async function findAssociatedTokenAddress(owner: Address, mint: Address): Promise<Address> {
  const seeds = [
    addressBytes.encode(owner),
    addressBytes.encode(TOKEN_PROGRAM_ADDRESS),
    addressBytes.encode(mint),
  ];
  return (await getProgramDerivedAddress({ programAddress: ASSOCIATED_TOKEN_PROGRAM_ADDRESS, seeds }))[0];
}

/** Associated Token `CreateIdempotent`: opens `owner`'s account for `mint`, `payer` paying its rent. */
export function getCreateAssociatedTokenIdempotentInstruction(input: {
  payer: TransactionSigner;
  account: Address;
  owner: Address;
  mint: Address;
}): Instruction {
  return {
    programAddress: ASSOCIATED_TOKEN_PROGRAM_ADDRESS,
    accounts: [
      signerMeta(input.payer),
      writable(input.account),
      readonly(input.owner),
      readonly(input.mint),
      readonly(SYSTEM_PROGRAM_ADDRESS),
      readonly(TOKEN_PROGRAM_ADDRESS),
    ],
    data: new Uint8Array([1]),
  };
}

/** System `CreateAccount` of a token account (owned by the Token program), `payer` funding its rent. */
export function getCreateTokenAccountInstruction(input: {
  payer: TransactionSigner;
  account: TransactionSigner;
  lamports: bigint;
}): Instruction {
  const data = new Uint8Array(52);
  data.set(getU32Encoder().encode(0), 0);
  data.set(u64.encode(input.lamports), 4);
  data.set(u64.encode(TOKEN_ACCOUNT_SIZE), 12);
  data.set(addressBytes.encode(TOKEN_PROGRAM_ADDRESS), 20);
  return {
    programAddress: SYSTEM_PROGRAM_ADDRESS,
    accounts: [signerMeta(input.payer), signerMeta(input.account)],
    data,
  };
}

/** SPL Token `InitializeAccount3`: `account` becomes `owner`'s token account of `mint`. */
export function getInitializeTokenAccountInstruction(input: {
  account: Address;
  mint: Address;
  owner: Address;
}): Instruction {
  const data = new Uint8Array(33);
  data[0] = 18;
  data.set(addressBytes.encode(input.owner), 1);
  return {
    programAddress: TOKEN_PROGRAM_ADDRESS,
    accounts: [writable(input.account), readonly(input.mint)],
    data,
  };
}

/** SPL Token `CloseAccount`: its lamports (on wrapped SOL, the SOL it holds) go to `destination`. */
export function getCloseTokenAccountInstruction(input: {
  account: Address;
  destination: Address;
  owner: TransactionSigner;
}): Instruction {
  return {
    programAddress: TOKEN_PROGRAM_ADDRESS,
    accounts: [
      writable(input.account),
      writable(input.destination),
      { ...signerMeta(input.owner), role: AccountRole.READONLY_SIGNER },
    ],
    data: new Uint8Array([9]),
  };
}

/** Compute Budget `SetComputeUnitLimit`. */
export function getSetComputeUnitLimitInstruction(units: number): Instruction {
  const data = new Uint8Array(5);
  data[0] = 2;
  data.set(getU32Encoder().encode(units), 1);
  return { programAddress: COMPUTE_BUDGET_PROGRAM_ADDRESS, data };
}

/** Compute Budget `SetComputeUnitPrice`, in micro-lamports per compute unit. */
export function getSetComputeUnitPriceInstruction(microLamports: bigint): Instruction {
  const data = new Uint8Array(9);
  data[0] = 3;
  data.set(u64.encode(microLamports), 1);
  return { programAddress: COMPUTE_BUDGET_PROGRAM_ADDRESS, data };
}
