import { setTimeout as delay } from 'node:timers/promises';
import type { Address, EncodedAccount, KeyPairSigner, Signature } from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import {
  BPF_LOADER_UPGRADEABLE_ADDRESS,
  BUFFER_HEADER_BYTES,
  getDeployWithMaxDataLenInstruction,
  getUpgradeInstruction,
  PROGRAM_ACCOUNT_BYTES,
  PROGRAM_DATA_HEADER_BYTES,
} from '../chain/loader.ts';
import type { BalanceReader } from '../chain/types.ts';
import { LAMPORTS_PER_SIGNATURE } from '../domain/route.ts';
import { findProgramDataAddress, readProgramDeployment } from './program-account.ts';
import {
  type BufferChain,
  type BufferContext,
  closeBuffer,
  type DeployProgress,
  findBufferAddress,
  readBuffer,
  writeChunkBytes,
  writeProgramBuffer,
} from './program-buffer.ts';
import { sendAndConfirm } from './send.ts';

/*
 * Deploys or upgrades a program through the upgradeable loader, the admin paying and holding the
 * upgrade authority: the program written into the admin's buffer (program-buffer.ts), then one
 * transaction that deploys it (creating the program account, with room for upgrades twice its
 * size, as `solana program deploy` leaves) or upgrades it. Every transaction lands through the
 * service's landing engine. Nothing is sent when the program on chain already holds the bytes, or
 * when the admin could not finish (not the upgrade authority, too little SOL).
 */

/** What a deployment asks of a chain. */
export type DeployChain = BufferChain & BalanceReader;

/** What the deployment did: deployed the program, upgraded it, found it holding the bytes, or could not act. */
export type ProgramDeployAction = 'deployed' | 'upgraded' | 'unchanged' | 'refused';

export interface ProgramDeployResult {
  action: ProgramDeployAction;
  message: string;
  programAddress: Address;
  programDataAddress: Address;
  /** The deploying or upgrading transaction. */
  signature: Signature | null;
  /** The program's upgrade authority after the run (null: not deployed, or none). */
  upgradeAuthority: Address | null;
  /** The program's room in ProgramData, in bytes (null when not deployed). */
  maxDataLen: bigint | null;
  /** Write transactions sent. */
  writes: number;
  /** What the admin's balance went down by (rent and fees; a closed leftover buffer counts back). */
  spentLamports: bigint;
}

export interface ProgramDeployInput {
  chain: DeployChain;
  /** Pays, writes the buffer, and is (or becomes) the upgrade authority. */
  admin: KeyPairSigner;
  programAddress: Address;
  /** The program's own key: needed only to deploy it the first time. */
  programSigner: KeyPairSigner | null;
  elf: Uint8Array;
  microLamportsPerCu?: bigint;
  /** Write transactions in flight at once (default 8). */
  concurrency?: number;
  progress?: DeployProgress;
  signal?: AbortSignal;
}

/** What is on chain, and what the admin can do about it. */
type Plan =
  | { kind: 'deploy' }
  | { kind: 'upgrade'; maxDataLen: bigint }
  | { kind: 'unchanged'; maxDataLen: bigint }
  | { kind: 'refused'; message: string; maxDataLen: bigint | null; upgradeAuthority: Address | null };

function programBytesMatch(programData: EncodedAccount, elf: Uint8Array): boolean {
  const bytes = (programData.data as Uint8Array).subarray(PROGRAM_DATA_HEADER_BYTES);
  return (
    Buffer.from(bytes.subarray(0, elf.length)).equals(elf) && bytes.subarray(elf.length).every((b) => b === 0)
  );
}

/** Decides from the program's accounts what the admin does (or why it cannot). */
function planFor(
  input: ProgramDeployInput,
  program: EncodedAccount | null,
  programData: EncodedAccount | null,
): Plan {
  const { programAddress, admin, elf } = input;
  const deployment = readProgramDeployment(program, programData);
  if (!deployment.deployed) {
    if (input.programSigner?.address === programAddress) return { kind: 'deploy' };
    return {
      kind: 'refused',
      maxDataLen: null,
      upgradeAuthority: null,
      message: `No program is deployed at ${programAddress}, and deploying one there the first time needs that address's keypair (--program-keypair).`,
    };
  }
  const maxDataLen = programData ? BigInt(programData.data.length - PROGRAM_DATA_HEADER_BYTES) : null;
  if (!deployment.upgradeable || deployment.upgradeAuthority === null || maxDataLen === null) {
    return {
      kind: 'refused',
      maxDataLen,
      upgradeAuthority: null,
      message: `The program ${programAddress} cannot be upgraded (${deployment.upgradeable ? 'it has no upgrade authority' : 'it is not deployed through the upgradeable loader'}): deploy the router at a new address (a new --program-keypair) and set ROUTER_PROGRAM_ID to it.`,
    };
  }
  if (deployment.upgradeAuthority !== admin.address) {
    return {
      kind: 'refused',
      maxDataLen,
      upgradeAuthority: deployment.upgradeAuthority,
      message: `The program ${programAddress}'s upgrade authority is ${deployment.upgradeAuthority}, not the admin ${admin.address}: only ${deployment.upgradeAuthority} can upgrade it (give its keypair as PLATFORM_ADMIN_KEYPAIR or --admin-keypair).`,
    };
  }
  if (programBytesMatch(programData!, elf)) return { kind: 'unchanged', maxDataLen };
  if (BigInt(elf.length) > maxDataLen) {
    return {
      kind: 'refused',
      maxDataLen,
      upgradeAuthority: admin.address,
      message: `The program has ${elf.length} bytes, more than the ${maxDataLen} bytes of room the program ${programAddress} was deployed with: deploy it at a new address instead.`,
    };
  }
  return { kind: 'upgrade', maxDataLen };
}

/** The lamports the admin needs for the plan: the buffer's rent (back at the end), new accounts' rent, fees. */
async function lamportsNeeded(
  input: ProgramDeployInput,
  plan: Plan,
  bufferLamports: bigint,
): Promise<bigint> {
  const { chain, elf } = input;
  const writes = BigInt(Math.ceil(elf.length / writeChunkBytes(input.admin)));
  const fees = (writes + 3n) * LAMPORTS_PER_SIGNATURE;
  const buffer = await chain.getMinimumBalanceForRentExemption(BUFFER_HEADER_BYTES + elf.length);
  const bufferShort = buffer > bufferLamports ? buffer - bufferLamports : 0n;
  if (plan.kind !== 'deploy') return bufferShort + fees;
  const [programData, program] = await Promise.all([
    chain.getMinimumBalanceForRentExemption(PROGRAM_DATA_HEADER_BYTES + 2 * elf.length),
    chain.getMinimumBalanceForRentExemption(PROGRAM_ACCOUNT_BYTES),
  ]);
  return bufferShort + programData + program + fees;
}

/** Waits for the next slot: a program deployed or upgraded in a slot is callable from the next. */
async function nextSlot(chain: DeployChain, signal: AbortSignal | undefined) {
  const landed = await chain.getSlot({ signal });
  while ((await chain.getSlot({ signal })) <= landed) await delay(200, undefined, { signal });
}

/** The deploying or upgrading transaction, sent once the buffer holds the program. */
async function deployOrUpgrade(
  input: ProgramDeployInput,
  context: BufferContext,
  plan: { kind: 'deploy' } | { kind: 'upgrade' },
  buffer: Address,
  programData: Address,
): Promise<Signature> {
  const { chain, admin, programAddress, elf } = input;
  const instructions =
    plan.kind === 'deploy'
      ? [
          getCreateAccountInstruction({
            payer: admin,
            newAccount: input.programSigner!,
            lamports: await chain.getMinimumBalanceForRentExemption(PROGRAM_ACCOUNT_BYTES),
            space: PROGRAM_ACCOUNT_BYTES,
            programAddress: BPF_LOADER_UPGRADEABLE_ADDRESS,
          }),
          getDeployWithMaxDataLenInstruction({
            payer: admin,
            programData,
            program: programAddress,
            buffer,
            authority: admin,
            maxDataLen: BigInt(2 * elf.length),
          }),
        ]
      : [
          getUpgradeInstruction({
            programData,
            program: programAddress,
            buffer,
            spill: admin.address,
            authority: admin,
          }),
        ];
  return sendAndConfirm(chain, admin, instructions, {
    signal: input.signal,
    microLamportsPerCu: context.microLamportsPerCu,
  });
}

/**
 * Deploys the program at `programAddress` (the first time) or upgrades it to `elf`, the admin as
 * upgrade authority. Safe to run again: after a failure it resumes the buffer where it stopped;
 * on a program that already holds `elf` it sends nothing (and closes a buffer left behind).
 */
export async function deployProgram(input: ProgramDeployInput): Promise<ProgramDeployResult> {
  const { chain, admin, programAddress, signal } = input;
  const progress = input.progress ?? (() => {});
  const context: BufferContext = {
    chain,
    admin,
    microLamportsPerCu: input.microLamportsPerCu ?? 0n,
    concurrency: input.concurrency ?? 8,
    progress,
    signal,
  };
  const programDataAddress = await findProgramDataAddress(programAddress);
  const balanceBefore = await chain.getBalance(admin.address, { signal });
  const [program, programData] = await chain.getAccounts([programAddress, programDataAddress], { signal });
  const plan = planFor(input, program ?? null, programData ?? null);
  const leftover = await readBuffer(chain, admin.address);
  const result = (
    fields: Omit<ProgramDeployResult, 'programAddress' | 'programDataAddress' | 'spentLamports'>,
  ) =>
    chain.getBalance(admin.address, { signal }).then((after) => ({
      ...fields,
      programAddress,
      programDataAddress,
      spentLamports: balanceBefore - after,
    }));

  if (plan.kind === 'refused' || plan.kind === 'unchanged') {
    let message =
      plan.kind === 'refused'
        ? plan.message
        : `The program ${programAddress} already holds these bytes; nothing to do.`;
    if (leftover && plan.kind === 'unchanged') {
      const closed = await closeBuffer(context);
      if (closed)
        message += ` Closed the buffer left by an earlier run (${closed.lamports} lamports back to the admin).`;
    } else if (leftover) {
      message += ` The buffer ${await findBufferAddress(admin.address)} left by an earlier run holds ${leftover.lamports} lamports: \`platform deploy --close-buffer\` returns them.`;
    }
    return result({
      action: plan.kind,
      message,
      signature: null,
      upgradeAuthority: plan.kind === 'refused' ? plan.upgradeAuthority : admin.address,
      maxDataLen: plan.maxDataLen,
      writes: 0,
    });
  }
  const needed = await lamportsNeeded(input, plan, leftover?.lamports ?? 0n);
  if (balanceBefore < needed) {
    return result({
      action: 'refused',
      message: `The admin ${admin.address} holds ${balanceBefore} lamports; ${plan.kind === 'deploy' ? 'deploying' : 'upgrading'} the program needs about ${needed} lamports (rent and fees; the buffer's rent comes back at the end): fund it.`,
      signature: null,
      upgradeAuthority: plan.kind === 'upgrade' ? admin.address : null,
      maxDataLen: plan.kind === 'upgrade' ? plan.maxDataLen : null,
      writes: 0,
    });
  }
  const { buffer, writes } = await writeProgramBuffer(context, input.elf);
  progress(
    `${plan.kind === 'deploy' ? 'Deploying' : 'Upgrading'} the program ${programAddress} from the buffer`,
  );
  const signature = await deployOrUpgrade(input, context, plan, buffer, programDataAddress);
  await nextSlot(chain, signal);
  const maxDataLen = plan.kind === 'deploy' ? BigInt(2 * input.elf.length) : plan.maxDataLen;
  return result({
    action: plan.kind === 'deploy' ? 'deployed' : 'upgraded',
    message: `${plan.kind === 'deploy' ? 'Deployed' : 'Upgraded'} the program ${programAddress} (${input.elf.length} bytes, room for ${maxDataLen}) with the admin ${admin.address} as its upgrade authority, in transaction ${signature}.`,
    signature,
    upgradeAuthority: admin.address,
    maxDataLen,
    writes,
  });
}
