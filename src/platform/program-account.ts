import {
  type Address,
  type EncodedAccount,
  getAddressDecoder,
  getAddressEncoder,
  getProgramDerivedAddress,
} from '@solana/kit';
import { BPF_LOADER_UPGRADEABLE_ADDRESS } from '../chain/loader.ts';

/*
 * The two accounts of a program deployed through the upgradeable loader (loader v3): the program
 * account (u32 tag 2, then its ProgramData address) and ProgramData (u32 tag 3, u64 slot, then an
 * optional upgrade authority). Read by hand: the loader's kit client (@solana-program/loader-v3)
 * targets an older kit, and these are two fixed offsets, the ones the router program checks.
 */

const PROGRAM_TAG = 2;
const PROGRAM_DATA_TAG = 3;
const addresses = getAddressDecoder();

/** The ProgramData account of a program deployed through the upgradeable loader. */
export async function findProgramDataAddress(program: Address): Promise<Address> {
  const [address] = await getProgramDerivedAddress({
    programAddress: BPF_LOADER_UPGRADEABLE_ADDRESS,
    seeds: [getAddressEncoder().encode(program)],
  });
  return address;
}

/** How a program account stands: absent, deployed upgradeable with or without an authority, or not upgradeable. */
export type ProgramDeployment =
  | { deployed: false }
  | { deployed: true; upgradeable: true; upgradeAuthority: Address | null }
  | { deployed: true; upgradeable: false };

const tag = (data: Uint8Array) =>
  data.length >= 4 ? new DataView(data.buffer, data.byteOffset, 4).getUint32(0, true) : -1;

/** Reads a program's deployment from its program account and its ProgramData account. */
export function readProgramDeployment(
  program: EncodedAccount | null,
  programData: EncodedAccount | null,
): ProgramDeployment {
  if (!program?.executable) return { deployed: false };
  const data = program.data as Uint8Array;
  if (
    program.programAddress !== BPF_LOADER_UPGRADEABLE_ADDRESS ||
    tag(data) !== PROGRAM_TAG ||
    data.length < 36 ||
    !programData ||
    addresses.decode(data.subarray(4, 36)) !== programData.address
  ) {
    return { deployed: true, upgradeable: false };
  }
  const header = programData.data as Uint8Array;
  if (
    programData.programAddress !== BPF_LOADER_UPGRADEABLE_ADDRESS ||
    tag(header) !== PROGRAM_DATA_TAG ||
    header.length < 45
  ) {
    return { deployed: true, upgradeable: false };
  }
  return {
    deployed: true,
    upgradeable: true,
    upgradeAuthority: header[12] === 1 ? addresses.decode(header.subarray(13, 45)) : null,
  };
}
