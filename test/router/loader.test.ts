import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import {
  type AccountMeta,
  AccountRole,
  type AccountSignerMeta,
  type Address,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressEncoder,
  getProgramDerivedAddress,
  type Instruction,
  type KeyPairSigner,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import { getCreateAccountInstruction, SYSTEM_PROGRAM_ADDRESS } from '@solana-program/system';
import { LiteSVM } from 'litesvm';
import { routerErrorName } from '../../src/chain/router/errors.ts';
import {
  getInitConfigInstruction,
  getInitOrchestratorInstruction,
  BPF_LOADER_UPGRADEABLE_ADDRESS as LOADER,
} from '../../src/chain/router/instructions.ts';
import { findConfigPda, findOrchestratorPda } from '../../src/chain/router/pda.ts';
import { ROUTER_PROGRAM_VARIANTS, routerProgramPath } from '../../src/chain/router/program.ts';

/*
 * The committed binaries deploy through the real upgradeable loader (buffer, writes, deploy), the
 * way a cluster deployment does, and the config can then be created only by the upgrade authority
 * recorded by that loader.
 */

const RENT_SYSVAR = 'SysvarRent111111111111111111111111111111111' as Address;
const CLOCK_SYSVAR = 'SysvarC1ock11111111111111111111111111111111' as Address;
const BUFFER_METADATA = 37;
const WRITE_CHUNK = 1000;

function loaderInstruction(accounts: (AccountMeta | AccountSignerMeta)[], data: Uint8Array): Instruction {
  return { programAddress: LOADER, accounts, data };
}

const u32 = (v: number) => new Uint8Array(new Uint32Array([v]).buffer);
const u64 = (v: bigint) => new Uint8Array(new BigUint64Array([v]).buffer);
const concat = (...parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((p) => [...p]));

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

async function deploy(svm: LiteSVM, deployer: KeyPairSigner, program: Uint8Array) {
  const buffer = await generateKeyPairSigner();
  const programAccount = await generateKeyPairSigner();
  const bufferSize = BigInt(BUFFER_METADATA + program.length);
  const ok = (r: Awaited<ReturnType<typeof send>>) => assert.ok(!('err' in r), r.toString());
  ok(
    await send(svm, deployer, [
      getCreateAccountInstruction({
        payer: deployer,
        newAccount: buffer,
        lamports: svm.minimumBalanceForRentExemption(bufferSize),
        space: bufferSize,
        programAddress: LOADER,
      }),
      loaderInstruction(
        [
          { address: buffer.address, role: AccountRole.WRITABLE },
          { address: deployer.address, role: AccountRole.READONLY },
        ],
        u32(0),
      ),
    ]),
  );
  for (let offset = 0; offset < program.length; offset += WRITE_CHUNK) {
    const bytes = program.subarray(offset, offset + WRITE_CHUNK);
    ok(
      await send(svm, deployer, [
        loaderInstruction(
          [
            { address: buffer.address, role: AccountRole.WRITABLE },
            { address: deployer.address, role: AccountRole.READONLY_SIGNER, signer: deployer },
          ],
          concat(u32(1), u32(offset), u64(BigInt(bytes.length)), bytes),
        ),
      ]),
    );
  }
  const [programData] = await getProgramDerivedAddress({
    programAddress: LOADER,
    seeds: [getAddressEncoder().encode(programAccount.address)],
  });
  ok(
    await send(svm, deployer, [
      getCreateAccountInstruction({
        payer: deployer,
        newAccount: programAccount,
        lamports: svm.minimumBalanceForRentExemption(36n),
        space: 36,
        programAddress: LOADER,
      }),
      loaderInstruction(
        [
          { address: deployer.address, role: AccountRole.WRITABLE_SIGNER, signer: deployer },
          { address: programData, role: AccountRole.WRITABLE },
          { address: programAccount.address, role: AccountRole.WRITABLE },
          { address: buffer.address, role: AccountRole.WRITABLE },
          { address: RENT_SYSVAR, role: AccountRole.READONLY },
          { address: CLOCK_SYSVAR, role: AccountRole.READONLY },
          { address: SYSTEM_PROGRAM_ADDRESS, role: AccountRole.READONLY },
          { address: deployer.address, role: AccountRole.READONLY_SIGNER, signer: deployer },
        ],
        concat(u32(2), u64(BigInt(program.length))),
      ),
    ]),
  );
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
});
