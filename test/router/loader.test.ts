import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import {
  type Address,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  type Instruction,
  type KeyPairSigner,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import { LiteSVM } from 'litesvm';
import {
  BUFFER_HEADER_BYTES,
  getCloseBufferInstruction,
  getDeployWithMaxDataLenInstruction,
  getInitializeBufferInstruction,
  getUpgradeInstruction,
  getWriteInstruction,
  BPF_LOADER_UPGRADEABLE_ADDRESS as LOADER,
  PROGRAM_ACCOUNT_BYTES,
  PROGRAM_DATA_HEADER_BYTES,
} from '../../src/chain/loader.ts';
import { routerErrorName } from '../../src/chain/router/errors.ts';
import {
  getInitConfigInstruction,
  getInitOrchestratorInstruction,
} from '../../src/chain/router/instructions.ts';
import { findConfigPda, findOrchestratorPda } from '../../src/chain/router/pda.ts';
import { ROUTER_PROGRAM_VARIANTS, routerProgramPath } from '../../src/chain/router/program.ts';
import { findProgramDataAddress } from '../../src/platform/program-account.ts';

/*
 * The committed binaries deploy through the real upgradeable loader (buffer, writes, deploy), the
 * way a cluster deployment does, with the service's own loader instructions; the config can then
 * be created only by the upgrade authority recorded by that loader, and only it can upgrade.
 */

const WRITE_CHUNK = 900;

async function send(svm: LiteSVM, payer: KeyPairSigner, instructions: Instruction[]) {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => svm.setTransactionMessageLifetimeUsingLatestBlockhash(m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  const result = svm.sendTransaction(await signTransactionMessageWithSigners(message));
  svm.expireBlockhash();
  return result;
}

const ok = (r: Awaited<ReturnType<typeof send>>) => assert.ok(!('err' in r), r.toString());

function existing(svm: LiteSVM, address: Address) {
  const account = svm.getAccount(address);
  assert.ok(account.exists, `${address} exists`);
  return account;
}

/** A buffer holding `program`, written by `authority`. */
async function writeBuffer(svm: LiteSVM, authority: KeyPairSigner, program: Uint8Array) {
  const buffer = await generateKeyPairSigner();
  const bufferSize = BigInt(BUFFER_HEADER_BYTES + program.length);
  ok(
    await send(svm, authority, [
      getCreateAccountInstruction({
        payer: authority,
        newAccount: buffer,
        lamports: svm.minimumBalanceForRentExemption(bufferSize),
        space: bufferSize,
        programAddress: LOADER,
      }),
      getInitializeBufferInstruction({ buffer: buffer.address, authority: authority.address }),
    ]),
  );
  for (let offset = 0; offset < program.length; offset += WRITE_CHUNK) {
    const bytes = program.subarray(offset, offset + WRITE_CHUNK);
    ok(
      await send(svm, authority, [getWriteInstruction({ buffer: buffer.address, authority, offset, bytes })]),
    );
  }
  return buffer.address;
}

async function deploy(svm: LiteSVM, deployer: KeyPairSigner, program: Uint8Array) {
  const buffer = await writeBuffer(svm, deployer, program);
  const programAccount = await generateKeyPairSigner();
  const programData = await findProgramDataAddress(programAccount.address);
  ok(
    await send(svm, deployer, [
      getCreateAccountInstruction({
        payer: deployer,
        newAccount: programAccount,
        lamports: svm.minimumBalanceForRentExemption(BigInt(PROGRAM_ACCOUNT_BYTES)),
        space: PROGRAM_ACCOUNT_BYTES,
        programAddress: LOADER,
      }),
      getDeployWithMaxDataLenInstruction({
        payer: deployer,
        programData,
        program: programAccount.address,
        buffer,
        authority: deployer,
        maxDataLen: BigInt(program.length * 2),
      }),
    ]),
  );
  assert.equal(svm.getAccount(buffer).exists, false, 'the deployment closes the buffer');
  // A deployed program becomes callable from the next slot.
  svm.warpToSlot(svm.getClock().slot + 1n);
  return { programAddress: programAccount.address, programData };
}

describe('router program through the upgradeable loader', () => {
  for (const variant of ROUTER_PROGRAM_VARIANTS) {
    test(`${variant}: deploys from the committed bytes and only its upgrade authority creates the config`, async () => {
      const svm = new LiteSVM();
      const [deployer, stranger] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
      for (const s of [deployer, stranger]) svm.airdrop(s.address, lamports(100_000_000_000n));
      const bytes = new Uint8Array(readFileSync(routerProgramPath(variant)));
      const { programAddress, programData } = await deploy(svm, deployer, bytes);
      const account = svm.getAccount(programAddress);
      assert.ok(account.exists && account.executable);

      const config = await findConfigPda(programAddress);
      const init = (admin: KeyPairSigner) =>
        getInitConfigInstruction(
          {
            admin,
            config,
            programData,
            screeningAuthority: stranger.address,
            platformWallet: deployer.address,
            screeningDepositLamports: 2_000_000n,
          },
          programAddress,
        );
      const refused = await send(svm, stranger, [init(stranger)]);
      assert.ok('err' in refused);
      assert.match(refused.toString(), /Custom\(6012\)/);
      assert.equal(routerErrorName(6012), 'NotUpgradeAuthority');
      const created = await send(svm, deployer, [init(deployer)]);
      assert.ok(!('err' in created), created.toString());
      const orchestrator = await findOrchestratorPda(stranger.address, programAddress);
      const ran = await send(svm, stranger, [
        getInitOrchestratorInstruction({ source: stranger, orchestrator }, programAddress),
      ]);
      assert.ok(!('err' in ran), ran.toString());
      assert.equal(svm.getAccount(orchestrator[0]).exists, true);
    });
  }

  test('only the upgrade authority upgrades (v0 to v3); a buffer closes back to its authority', async () => {
    const svm = new LiteSVM();
    const [deployer, stranger] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
    for (const s of [deployer, stranger]) svm.airdrop(s.address, lamports(100_000_000_000n));
    const [v0, v3] = ROUTER_PROGRAM_VARIANTS.map((v) => new Uint8Array(readFileSync(routerProgramPath(v))));
    const { programAddress, programData } = await deploy(svm, deployer, v0!);
    const programBytes = () => existing(svm, programData).data.subarray(PROGRAM_DATA_HEADER_BYTES);

    const strangers = await writeBuffer(svm, stranger, v3!);
    const upgrade = (authority: KeyPairSigner, buffer: typeof strangers) =>
      getUpgradeInstruction({
        programData,
        program: programAddress,
        buffer,
        spill: authority.address,
        authority,
      });
    const refused = await send(svm, stranger, [upgrade(stranger, strangers)]);
    assert.ok('err' in refused);
    assert.match(refused.meta().logs().join('\n'), /Incorrect upgrade authority provided/);
    assert.deepEqual(programBytes().subarray(0, v0!.length), v0);

    const before = svm.getBalance(stranger.address)!;
    const rent = existing(svm, strangers).lamports;
    ok(
      await send(svm, stranger, [
        getCloseBufferInstruction({ buffer: strangers, recipient: stranger.address, authority: stranger }),
      ]),
    );
    assert.equal(svm.getAccount(strangers).exists, false);
    assert.equal(svm.getBalance(stranger.address), before + rent - 5_000n);

    const buffer = await writeBuffer(svm, deployer, v3!);
    ok(await send(svm, deployer, [upgrade(deployer, buffer)]));
    assert.deepEqual(programBytes().subarray(0, v3!.length), v3);
    assert.ok(
      programBytes()
        .subarray(v3!.length)
        .every((byte) => byte === 0),
    );
  });
});
