// Programs on the local chain: the SPL set is there from genesis, and programs given at start are
// deployed through the upgradeable loader (so they look like any deployed program) on every start.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { AccountRole, type Address, generateKeyPairSigner } from '@solana/kit';
import { startLocalChain } from '../../src/chain/local/start.ts';
import { signTransaction, tempDir } from './helpers.ts';

const UPGRADEABLE_LOADER = 'BPFLoaderUpgradeab1e11111111111111111111111';
const MEMO_V3 = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr' as Address;

test('SPL Token, Token-2022, Associated Token Account and Memo are deployed from genesis', async (t) => {
  const local = await startLocalChain({ rpcPort: 0, autoTick: false });
  t.after(() => local.close());
  const programs = {
    TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA: UPGRADEABLE_LOADER,
    TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb: UPGRADEABLE_LOADER,
    ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL: 'BPFLoader2111111111111111111111111111111111',
    MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr: 'BPFLoader2111111111111111111111111111111111',
    Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo: 'BPFLoader1111111111111111111111111111111111',
  };
  for (const [id, loader] of Object.entries(programs)) {
    const account = await local.chain.getAccount(id as Address);
    assert.equal(account?.executable, true, id);
    assert.equal(account?.programAddress, loader, id);
  }
  assert.equal(
    await local.chain.getMintDecimals('So11111111111111111111111111111111111111112' as Address),
    9,
  );
});

test('programs given at start are deployed through the upgradeable loader, again on every start', async (t) => {
  const data = await tempDir('chain-programs');
  // Any valid SBF program will do: take the Memo program's ELF from a chain that has it.
  const donor = await startLocalChain({ rpcPort: 0, autoTick: false });
  const elf = (await donor.chain.getAccount(MEMO_V3))?.data as Uint8Array;
  await donor.close();
  assert.deepEqual([...elf.subarray(0, 4)], [0x7f, 0x45, 0x4c, 0x46]);

  const programId = (await generateKeyPairSigner()).address;
  const firstAuthority = (await generateKeyPairSigner()).address;
  const secondAuthority = (await generateKeyPairSigner()).address;
  const start = (upgradeAuthority: Address) =>
    startLocalChain({
      dataDir: data.dir,
      rpcPort: 0,
      autoTick: false,
      programs: [{ programId, elf, upgradeAuthority }],
    });

  let local = await start(firstAuthority);
  const program = await local.chain.getAccount(programId);
  assert.equal(program?.executable, true);
  assert.equal(program?.programAddress, UPGRADEABLE_LOADER);
  const programData = program?.data as Uint8Array;
  assert.deepEqual([...programData.subarray(0, 4)], [2, 0, 0, 0]);
  const programDataAddress = (await import('../../src/chain/base58.ts')).encodeBase58(
    programData.subarray(4, 36),
  ) as Address;
  const readAuthority = async () => {
    const account = await local.chain.getAccount(programDataAddress);
    const bytes = account?.data as Uint8Array;
    assert.equal(account?.programAddress, UPGRADEABLE_LOADER);
    assert.deepEqual([...bytes.subarray(45)], [...elf]);
    return bytes[12] === 1
      ? (await import('../../src/chain/base58.ts')).encodeBase58(bytes.subarray(13, 45))
      : null;
  };
  assert.equal(await readAuthority(), firstAuthority);

  const payer = await generateKeyPairSigner();
  await local.cheats.airdrop(payer.address, 1_000_000_000n);
  const tx = await signTransaction(
    payer,
    [
      {
        programAddress: programId,
        accounts: [{ address: payer.address, role: AccountRole.READONLY_SIGNER }],
        data: new TextEncoder().encode('hello'),
      },
    ],
    await local.chain.getLatestBlockhash(),
  );
  await local.chain.sendTransaction(tx.bytes);
  const landed = await local.chain.getTransaction(tx.signature);
  assert.equal(landed?.err, null);
  assert.deepEqual(landed?.invokedPrograms, [programId]);
  assert.deepEqual(landed?.logs, [
    `Program ${programId} invoke [1]`,
    'Program log: Signed by:',
    `Program log: ${payer.address}`,
    'Program log: Memo (len 5)',
    'Program log: hello',
    `Program ${programId} consumed 500 of 200000 compute units`,
    `Program ${programId} success`,
  ]);
  await local.close();

  local = await start(secondAuthority);
  t.after(async () => {
    await local.close();
    await data.cleanup();
  });
  assert.equal(await readAuthority(), secondAuthority);
  assert.equal((await local.chain.getTransaction(tx.signature))?.err, null);
});

test("the project's router artifact deploys through the same option", async (t) => {
  const elf = await readFile(new URL('../../programs/router/build/router-v0.so', import.meta.url));
  const programId = (await generateKeyPairSigner()).address;
  const local = await startLocalChain({ rpcPort: 0, autoTick: false, programs: [{ programId, elf }] });
  t.after(() => local.close());
  const program = await local.chain.getAccount(programId);
  assert.equal(program?.executable, true);
  assert.equal(program?.programAddress, UPGRADEABLE_LOADER);
});
