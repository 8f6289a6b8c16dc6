// Deploying the router through the upgradeable loader (what `platform deploy` runs), on the
// embedded chain: a deployment that stopped half way resumes from its buffer and writes only what
// is missing; a buffer left behind is closed, its rent back to the admin; an admin short of SOL
// is refused before anything is sent.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { generateKeyPairSigner, type KeyPairSigner } from '@solana/kit';
import { PROGRAM_DATA_HEADER_BYTES } from '../../src/chain/loader.ts';
import { routerProgramPath } from '../../src/chain/router/program.ts';
import { findProgramDataAddress } from '../../src/platform/program-account.ts';
import {
  type BufferContext,
  readBuffer,
  writeChunkBytes,
  writeProgramBuffer,
} from '../../src/platform/program-buffer.ts';
import { deployProgram } from '../../src/platform/program-deploy.ts';
import { startTestChain, type TestChain } from '../helpers/chain.ts';

let chain: TestChain;
let v0: Uint8Array;
before(async () => {
  chain = await startTestChain({ wsPort: null });
  v0 = new Uint8Array(await readFile(routerProgramPath('v0')));
});
after(() => chain.close());

async function fundedAdmin(lamports: bigint): Promise<KeyPairSigner> {
  const admin = await generateKeyPairSigner();
  await chain.cheats.airdrop(admin.address, lamports);
  return admin;
}

const bufferContext = (admin: KeyPairSigner): BufferContext => ({
  chain: chain.chain,
  admin,
  microLamportsPerCu: 0n,
  concurrency: 4,
  progress: () => {},
});

test('a deployment that stopped half way resumes from its buffer: only the chunks not written yet are sent', async () => {
  const admin = await fundedAdmin(2_000_000_000n);
  const program = await generateKeyPairSigner();
  // What a run stopped half way leaves: the buffer holds the first half of the program.
  const half = Math.floor(v0.length / 2);
  const firstHalf = new Uint8Array(v0.length);
  firstHalf.set(v0.subarray(0, half));
  await writeProgramBuffer(bufferContext(admin), firstHalf);

  const progress: string[] = [];
  const result = await deployProgram({
    chain: chain.chain,
    admin,
    programAddress: program.address,
    programSigner: program,
    elf: v0,
    progress: (line) => progress.push(line),
  });
  assert.equal(result.action, 'deployed', result.message);
  const chunk = writeChunkBytes(admin);
  const offsets = Array.from({ length: Math.ceil(v0.length / chunk) }, (_, i) => i * chunk);
  const missing = offsets.filter(
    (offset) =>
      !Buffer.from(v0.subarray(offset, offset + chunk)).equals(firstHalf.subarray(offset, offset + chunk)),
  );
  assert.ok(missing.length < offsets.length / 2 + 1);
  assert.equal(result.writes, missing.length, 'the chunks the buffer lacked, and no more');
  assert.match(progress[0]!, /^Resuming with the buffer \w+ left by an earlier run$/);
  const programData = await chain.chain.getAccount(await findProgramDataAddress(program.address));
  assert.deepEqual(
    programData?.data.subarray(PROGRAM_DATA_HEADER_BYTES, PROGRAM_DATA_HEADER_BYTES + v0.length),
    v0,
  );
  assert.equal(await readBuffer(chain.chain, admin.address), null, 'the deployment consumed the buffer');
});

test('a buffer left behind is closed when the program already holds the bytes, its rent back to the admin', async () => {
  const admin = await fundedAdmin(2_000_000_000n);
  const program = await generateKeyPairSigner();
  const input = {
    chain: chain.chain,
    admin,
    programAddress: program.address,
    programSigner: program,
    elf: v0,
  };
  assert.equal((await deployProgram(input)).action, 'deployed');
  // A run of other bytes that stopped: any bytes will do, the loader reads them only at deployment.
  await writeProgramBuffer(bufferContext(admin), new Uint8Array(2_000).fill(7));
  const buffer = await readBuffer(chain.chain, admin.address);
  assert.ok(buffer);
  const before = await chain.chain.getBalance(admin.address);

  const again = await deployProgram(input);
  assert.equal(again.action, 'unchanged');
  assert.match(
    again.message,
    new RegExp(
      `Closed the buffer left by an earlier run \\(${buffer.lamports} lamports back to the admin\\)\\.$`,
    ),
  );
  assert.equal(await readBuffer(chain.chain, admin.address), null);
  assert.equal(await chain.chain.getBalance(admin.address), before + buffer.lamports - 5_000n);
  assert.equal(again.spentLamports, 5_000n - buffer.lamports);
});

test('an admin without the SOL a first deployment needs is refused before anything is sent', async () => {
  const admin = await fundedAdmin(500_000_000n);
  const program = await generateKeyPairSigner();
  const result = await deployProgram({
    chain: chain.chain,
    admin,
    programAddress: program.address,
    programSigner: program,
    elf: v0,
  });
  assert.equal(result.action, 'refused');
  assert.match(
    result.message,
    new RegExp(
      `^The admin ${admin.address} holds 500000000 lamports; deploying the program needs about \\d+ lamports`,
    ),
  );
  assert.equal(result.spentLamports, 0n);
  assert.equal(await readBuffer(chain.chain, admin.address), null);
});
