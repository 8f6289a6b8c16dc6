// The protocol config's instructions: its creation by the program's upgrade authority, and its
// updates by its admin.
import {
  type Address,
  getStructEncoder,
  getU64Encoder,
  type Instruction,
  type ProgramDerivedAddress,
  padRightEncoder,
  type TransactionSigner,
} from '@solana/kit';
import { SYSTEM_PROGRAM_ADDRESS } from '@solana-program/system';
import { ROUTER_PROGRAM_ADDRESS } from '../program.ts';
import {
  addressEncoder,
  instruction,
  RouterInstruction,
  readonly,
  signerMeta,
  u8,
  writable,
} from './encoding.ts';

const initConfigEncoder = getStructEncoder([
  ['tag', u8],
  ['bump', padRightEncoder(u8, 6)],
  ['screeningDepositLamports', getU64Encoder()],
  ['screeningAuthority', addressEncoder],
  ['platformWallet', addressEncoder],
]);

/** Creates the protocol config; signed by the program's upgrade authority. */
export function getInitConfigInstruction(
  input: {
    admin: TransactionSigner;
    config: ProgramDerivedAddress;
    programData: Address;
    screeningAuthority: Address;
    platformWallet: Address;
    screeningDepositLamports: bigint;
  },
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Instruction {
  const [config, bump] = input.config;
  return instruction(
    programAddress,
    [
      signerMeta(input.admin),
      writable(config),
      readonly(programAddress),
      readonly(input.programData),
      readonly(SYSTEM_PROGRAM_ADDRESS),
    ],
    new Uint8Array(
      initConfigEncoder.encode({
        tag: RouterInstruction.InitConfig,
        bump,
        screeningDepositLamports: input.screeningDepositLamports,
        screeningAuthority: input.screeningAuthority,
        platformWallet: input.platformWallet,
      }),
    ),
  );
}

const updateConfigEncoder = getStructEncoder([
  ['tag', padRightEncoder(u8, 7)],
  ['screeningDepositLamports', getU64Encoder()],
  ['admin', addressEncoder],
  ['screeningAuthority', addressEncoder],
  ['platformWallet', addressEncoder],
]);

/** Replaces the protocol config's keys and deposit; signed by the current admin. */
export function getUpdateConfigInstruction(
  input: {
    admin: TransactionSigner;
    config: Address;
    newAdmin: Address;
    screeningAuthority: Address;
    platformWallet: Address;
    screeningDepositLamports: bigint;
  },
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Instruction {
  return instruction(
    programAddress,
    [signerMeta(input.admin, false), writable(input.config)],
    new Uint8Array(
      updateConfigEncoder.encode({
        tag: RouterInstruction.UpdateConfig,
        screeningDepositLamports: input.screeningDepositLamports,
        admin: input.newAdmin,
        screeningAuthority: input.screeningAuthority,
        platformWallet: input.platformWallet,
      }),
    ),
  );
}
