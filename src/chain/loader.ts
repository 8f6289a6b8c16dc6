// The upgradeable BPF loader (loader v3): the instructions that deploy and upgrade a program from a
// buffer, and the layouts of its buffer and ProgramData accounts.
//
// Encoded by hand: the loader's kit client, @solana-program/loader-v3 (0.3.0, its only release),
// declares a peer dependency on @solana/kit ^6, which npm refuses beside the kit 8 the service
// runs. These are five fixed bincode layouts: a u32 tag, then u32/u64 arguments.
import {
  type AccountMeta,
  AccountRole,
  type AccountSignerMeta,
  type Address,
  addEncoderSizePrefix,
  address,
  type EncodedAccount,
  getAddressDecoder,
  getBytesEncoder,
  getStructEncoder,
  getU32Encoder,
  getU64Encoder,
  type Instruction,
  type TransactionSigner,
} from '@solana/kit';
import { SYSTEM_PROGRAM_ADDRESS } from '@solana-program/system';
import { CLOCK_SYSVAR } from './accounts.ts';

export const BPF_LOADER_UPGRADEABLE_ADDRESS = address('BPFLoaderUpgradeab1e11111111111111111111111');

const RENT_SYSVAR = address('SysvarRent111111111111111111111111111111111');

/** A buffer's header: u32 tag 1, then an optional authority (1 + 32 bytes); the program's bytes follow. */
export const BUFFER_HEADER_BYTES = 37;
/** ProgramData's header: u32 tag 3, u64 slot, optional upgrade authority; the program's bytes follow. */
export const PROGRAM_DATA_HEADER_BYTES = 45;
/** A program account: u32 tag 2, then its ProgramData address. */
export const PROGRAM_ACCOUNT_BYTES = 36;

const BUFFER_TAG = 1;

const LoaderInstruction = { InitializeBuffer: 0, Write: 1, DeployWithMaxDataLen: 2, Upgrade: 3, Close: 5 };

const u32 = getU32Encoder();
const tagEncoder = getStructEncoder([['tag', u32]]);
const writeEncoder = getStructEncoder([
  ['tag', u32],
  ['offset', u32],
  ['bytes', addEncoderSizePrefix(getBytesEncoder(), getU64Encoder())],
]);
const deployEncoder = getStructEncoder([
  ['tag', u32],
  ['maxDataLen', getU64Encoder()],
]);

const writable = (account: Address): AccountMeta => ({ address: account, role: AccountRole.WRITABLE });
const readonly = (account: Address): AccountMeta => ({ address: account, role: AccountRole.READONLY });
const signing = (signer: TransactionSigner, isWritable = false): AccountSignerMeta => ({
  address: signer.address,
  role: isWritable ? AccountRole.WRITABLE_SIGNER : AccountRole.READONLY_SIGNER,
  signer,
});

function loaderInstruction(accounts: (AccountMeta | AccountSignerMeta)[], data: Uint8Array): Instruction {
  return { programAddress: BPF_LOADER_UPGRADEABLE_ADDRESS, accounts, data };
}

/** Makes an account the loader owns (allocated, not yet initialised) a buffer that `authority` writes. */
export function getInitializeBufferInstruction(input: { buffer: Address; authority: Address }): Instruction {
  return loaderInstruction(
    [writable(input.buffer), readonly(input.authority)],
    new Uint8Array(tagEncoder.encode({ tag: LoaderInstruction.InitializeBuffer })),
  );
}

/** Writes `bytes` into the buffer's program bytes at `offset`; signed by the buffer's authority. */
export function getWriteInstruction(input: {
  buffer: Address;
  authority: TransactionSigner;
  offset: number;
  bytes: Uint8Array;
}): Instruction {
  return loaderInstruction(
    [writable(input.buffer), signing(input.authority)],
    new Uint8Array(
      writeEncoder.encode({ tag: LoaderInstruction.Write, offset: input.offset, bytes: input.bytes }),
    ),
  );
}

/**
 * Deploys the buffer's bytes as the program at `program` (an account of 36 bytes the loader owns,
 * created in the same transaction) with room for `maxDataLen` bytes of later upgrades. The buffer's
 * authority becomes the upgrade authority; the buffer's lamports go to the payer.
 */
export function getDeployWithMaxDataLenInstruction(input: {
  payer: TransactionSigner;
  programData: Address;
  program: Address;
  buffer: Address;
  authority: TransactionSigner;
  maxDataLen: bigint;
}): Instruction {
  return loaderInstruction(
    [
      signing(input.payer, true),
      writable(input.programData),
      writable(input.program),
      writable(input.buffer),
      readonly(RENT_SYSVAR),
      readonly(CLOCK_SYSVAR),
      readonly(SYSTEM_PROGRAM_ADDRESS),
      signing(input.authority),
    ],
    new Uint8Array(
      deployEncoder.encode({ tag: LoaderInstruction.DeployWithMaxDataLen, maxDataLen: input.maxDataLen }),
    ),
  );
}

/** Replaces the program's bytes with the buffer's; signed by the upgrade authority. The buffer's lamports go to `spill`. */
export function getUpgradeInstruction(input: {
  programData: Address;
  program: Address;
  buffer: Address;
  spill: Address;
  authority: TransactionSigner;
}): Instruction {
  return loaderInstruction(
    [
      writable(input.programData),
      writable(input.program),
      writable(input.buffer),
      writable(input.spill),
      readonly(RENT_SYSVAR),
      readonly(CLOCK_SYSVAR),
      signing(input.authority),
    ],
    new Uint8Array(tagEncoder.encode({ tag: LoaderInstruction.Upgrade })),
  );
}

/** Closes a buffer, its lamports to `recipient`; signed by its authority. */
export function getCloseBufferInstruction(input: {
  buffer: Address;
  recipient: Address;
  authority: TransactionSigner;
}): Instruction {
  return loaderInstruction(
    [writable(input.buffer), writable(input.recipient), signing(input.authority)],
    new Uint8Array(tagEncoder.encode({ tag: LoaderInstruction.Close })),
  );
}

/** A buffer as read from its account: its authority (null: none) and the program bytes written so far. */
export interface LoaderBuffer {
  authority: Address | null;
  bytes: Uint8Array;
  lamports: bigint;
}

/** The buffer held in an account, or null when the account is not a loader buffer. */
export function decodeLoaderBuffer(account: EncodedAccount): LoaderBuffer | null {
  const data = account.data as Uint8Array;
  if (account.programAddress !== BPF_LOADER_UPGRADEABLE_ADDRESS || data.length < BUFFER_HEADER_BYTES)
    return null;
  if (new DataView(data.buffer, data.byteOffset, 4).getUint32(0, true) !== BUFFER_TAG) return null;
  return {
    authority: data[4] === 1 ? getAddressDecoder().decode(data.subarray(5, 37)) : null,
    bytes: data.subarray(BUFFER_HEADER_BYTES),
    lamports: account.lamports,
  };
}
