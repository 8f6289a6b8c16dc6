import { type Address, createAddressWithSeed, type KeyPairSigner, type Signature } from '@solana/kit';
import { getCreateAccountWithSeedInstruction, SYSTEM_PROGRAM_ADDRESS } from '@solana-program/system';
import {
  BPF_LOADER_UPGRADEABLE_ADDRESS,
  BUFFER_HEADER_BYTES,
  decodeLoaderBuffer,
  getCloseBufferInstruction,
  getInitializeBufferInstruction,
  getWriteInstruction,
  type LoaderBuffer,
} from '../chain/loader.ts';
import { TRANSACTION_SIZE_LIMIT, transactionSize } from '../chain/transactions.ts';
import type { AccountReader, RentReader } from '../chain/types.ts';
import { PlatformTransactionError, sendAndConfirm, type TransactionChain } from './send.ts';

/*
 * The buffer a program deployment writes the program into before the loader deploys it. Its address
 * comes from the admin and a fixed seed (createAccountWithSeed), not from a fresh key: a deployment
 * that stopped half way finds its buffer again, writes only the chunks that differ, and a buffer
 * left behind is never lost track of (`closeBuffer` returns its rent).
 */

const BUFFER_SEED = 'transfer-router-program';
/** Rounds of writing what differs before giving up: a write that expired unlanded is written again. */
const MAX_WRITE_ROUNDS = 3;

/** What the buffer's work asks of a chain. */
export type BufferChain = TransactionChain & AccountReader & RentReader;

/** How a program deployment reports its progress. */
export type DeployProgress = (message: string) => void;

/** What writing the buffer needs. */
export interface BufferContext {
  chain: BufferChain;
  admin: KeyPairSigner;
  microLamportsPerCu: bigint;
  /** Write transactions in flight at once. */
  concurrency: number;
  progress: DeployProgress;
  signal?: AbortSignal | undefined;
}

/** The admin's deployment buffer. */
export function findBufferAddress(admin: Address): Promise<Address> {
  return createAddressWithSeed({
    baseAddress: admin,
    programAddress: BPF_LOADER_UPGRADEABLE_ADDRESS,
    seed: BUFFER_SEED,
  });
}

/** The admin's buffer as it stands, or null when there is none. */
export async function readBuffer(chain: AccountReader, admin: Address): Promise<LoaderBuffer | null> {
  const account = await chain.getAccount(await findBufferAddress(admin));
  return account ? decodeLoaderBuffer(account) : null;
}

/** Program bytes a write transaction carries: what fits beside its signature, accounts and budget. */
export function writeChunkBytes(admin: KeyPairSigner): number {
  // Sized with a sample of bytes long enough that its length takes as many bytes as a full chunk's,
  // and any address other than the admin's standing in for the buffer's.
  const sample = 512;
  const size = transactionSize({
    feePayer: admin.address,
    instructions: [
      getWriteInstruction({
        buffer: SYSTEM_PROGRAM_ADDRESS,
        authority: admin,
        offset: 0,
        bytes: new Uint8Array(sample),
      }),
    ],
    version: 0,
  });
  return TRANSACTION_SIZE_LIMIT - (size - sample);
}

const send = (context: BufferContext, instructions: Parameters<typeof sendAndConfirm>[2]) =>
  sendAndConfirm(context.chain, context.admin, instructions, {
    signal: context.signal,
    microLamportsPerCu: context.microLamportsPerCu,
  });

/** Closes the admin's buffer, its rent back to the admin; null when there was none. */
export async function closeBuffer(
  context: Pick<BufferContext, 'chain' | 'admin' | 'microLamportsPerCu' | 'signal'>,
): Promise<{ lamports: bigint; signature: Signature } | null> {
  const { chain, admin } = context;
  const buffer = await readBuffer(chain, admin.address);
  if (!buffer) return null;
  const address = await findBufferAddress(admin.address);
  const signature = await sendAndConfirm(
    chain,
    admin,
    [getCloseBufferInstruction({ buffer: address, recipient: admin.address, authority: admin })],
    { signal: context.signal, microLamportsPerCu: context.microLamportsPerCu },
  );
  return { lamports: buffer.lamports, signature };
}

/**
 * A buffer of the program's size, created when there is none; one of another size (a deployment
 * of other bytes that stopped) is closed first, its rent back to the admin. Answers the program
 * bytes it holds (a new account's are zeros).
 */
async function ensureBuffer(context: BufferContext, size: number): Promise<Uint8Array> {
  const { chain, admin } = context;
  const address = await findBufferAddress(admin.address);
  const existing = await readBuffer(chain, admin.address);
  if (existing?.bytes.length === size) {
    context.progress(`Resuming with the buffer ${address} left by an earlier run`);
    return existing.bytes;
  }
  if (existing) {
    await closeBuffer(context);
    context.progress(
      `Closed the buffer ${address} of an earlier run (other bytes), its rent back to the admin`,
    );
  }
  const space = BUFFER_HEADER_BYTES + size;
  const rent = await chain.getMinimumBalanceForRentExemption(space);
  await send(context, [
    getCreateAccountWithSeedInstruction({
      payer: admin,
      newAccount: address,
      base: admin.address,
      seed: BUFFER_SEED,
      amount: rent,
      space,
      programAddress: BPF_LOADER_UPGRADEABLE_ADDRESS,
    }),
    getInitializeBufferInstruction({ buffer: address, authority: admin.address }),
  ]);
  context.progress(
    `Created the buffer ${address} (${space} bytes, ${rent} lamports of rent until the deployment)`,
  );
  return new Uint8Array(size);
}

/** The offsets of the chunks whose bytes in the buffer differ from the program's. */
function staleChunks(program: Uint8Array, written: Uint8Array | null, chunk: number): number[] {
  const offsets: number[] = [];
  for (let offset = 0; offset < program.length; offset += chunk) {
    const end = Math.min(offset + chunk, program.length);
    if (!written || !Buffer.from(program.subarray(offset, end)).equals(written.subarray(offset, end)))
      offsets.push(offset);
  }
  return offsets;
}

/** Runs `work` on every item, at most `limit` at once; the first failure stops taking new items. */
async function eachBounded<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>) {
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const item = items[next++] as T;
      await work(item).catch((error: unknown) => {
        failed = true;
        throw error;
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Writes the program into the admin's buffer, `concurrency` write transactions at a time, then
 * reads the buffer back and writes again what differs (a write that expired unlanded), until the
 * buffer holds exactly the program. Answers the buffer's address and the writes sent.
 */
export async function writeProgramBuffer(
  context: BufferContext,
  program: Uint8Array,
): Promise<{ buffer: Address; writes: number }> {
  const { chain, admin } = context;
  const address = await findBufferAddress(admin.address);
  const chunk = writeChunkBytes(admin);
  let written: Uint8Array | null = await ensureBuffer(context, program.length);
  let writes = 0;
  for (let round = 1; ; round++) {
    const stale = staleChunks(program, written, chunk);
    if (stale.length === 0) return { buffer: address, writes };
    if (round > MAX_WRITE_ROUNDS) {
      throw new PlatformTransactionError(
        `${stale.length} chunks of the buffer ${address} still differ after ${MAX_WRITE_ROUNDS} rounds of writes; run the same command again to resume from there`,
      );
    }
    const total = Math.ceil(program.length / chunk);
    context.progress(`Writing ${stale.length} of ${total} chunks of ${chunk} bytes into ${address}`);
    await eachBounded(stale, context.concurrency, async (offset) => {
      const bytes = program.subarray(offset, offset + chunk);
      writes++;
      await send(context, [getWriteInstruction({ buffer: address, authority: admin, offset, bytes })]).catch(
        (error: unknown) => {
          // Expired unlanded: the next round finds the chunk still stale and writes it again.
          if (!(error instanceof PlatformTransactionError && error.expired)) throw error;
        },
      );
    });
    written = (await readBuffer(chain, admin.address))?.bytes ?? null;
  }
}
