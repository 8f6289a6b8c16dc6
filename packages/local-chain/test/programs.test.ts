// Programs on the local chain: the SPL set is there from genesis, and programs given at start are
// deployed through the upgradeable loader (so they look like any deployed program) on every start.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AccountRole, type Address, generateKeyPairSigner, getAddressDecoder } from '@solana/kit';
import { fetchMint } from '@solana-program/token';
import { type LocalChain, startLocalChain } from '../src/index.ts';
import { signTransaction } from '../src/testing.ts';
import { tempDir, walletOf } from './helpers.ts';

const UPGRADEABLE_LOADER = 'BPFLoaderUpgradeab1e11111111111111111111111';
const MEMO_V3 = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr' as Address;
const addressAt = (bytes: Uint8Array) => getAddressDecoder().decode(bytes);

/** A program account as a wallet reads it: executable or not, its loader, its data. */
async function program(local: LocalChain, address: Address) {
  const account = await walletOf(local).account(address);
  assert.ok(account.exists, address);
  return { executable: account.executable, loader: account.programAddress, data: account.data };
}

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
    const { executable, loader: actual } = await program(local, id as Address);
    assert.deepEqual({ executable, loader: actual }, { executable: true, loader }, id);
  }
  const nativeMint = await fetchMint(
    walletOf(local).rpc,
    'So11111111111111111111111111111111111111112' as Address,
  );
  assert.equal(nativeMint.data.decimals, 9);
});

test('programs given at start are deployed through the upgradeable loader, again on every start', async (t) => {
  const data = await tempDir('chain-programs');
  // Any valid SBF program will do: take the Memo program's ELF from a chain that has it.
  const donor = await startLocalChain({ rpcPort: 0, autoTick: false });
  const elf = (await program(donor, MEMO_V3)).data;
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
  const deployed = await program(local, programId);
  assert.equal(deployed.executable, true);
  assert.equal(deployed.loader, UPGRADEABLE_LOADER);
  assert.deepEqual([...deployed.data.subarray(0, 4)], [2, 0, 0, 0]);
  const programDataAddress = addressAt(deployed.data.subarray(4, 36));
  const readAuthority = async () => {
    const programData = await program(local, programDataAddress);
    assert.equal(programData.loader, UPGRADEABLE_LOADER);
    assert.deepEqual([...programData.data.subarray(45)], [...elf]);
    return programData.data[12] === 1 ? addressAt(programData.data.subarray(13, 45)) : null;
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
    await walletOf(local).blockhash(),
  );
  await walletOf(local).send(tx);
  const landed = await walletOf(local).transaction(tx.signature);
  assert.equal(landed?.meta?.err, null);
  assert.deepEqual(landed?.meta?.logMessages, [
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
  assert.equal((await walletOf(local).transaction(tx.signature))?.meta?.err, null);
});
