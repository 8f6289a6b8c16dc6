// The Token program implementation a chain runs: p-token by default, the legacy spl_token 3.5.0
// (read from solana-bankrun's addon) when asked for. The same wallet flow runs on both; what tells
// them apart is what a Transfer costs.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { generateKeyPairSigner } from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToInstruction,
  getTransferInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import {
  type LocalChain,
  parseTokenProgram,
  startLocalChain,
  type TokenProgramImplementation,
} from '../src/index.ts';
import {
  LEGACY_TOKEN_PROGRAM_SHA256,
  legacyTokenProgram,
  signTransaction,
  tokenProgramFromEnv,
} from '../src/testing.ts';
import { walletOf } from './helpers.ts';

/** Mints tokens to one wallet and transfers some to another; returns the Transfer's compute units. */
async function transferComputeUnits(local: LocalChain): Promise<bigint> {
  const wallet = walletOf(local);
  const [payer, mint, recipient] = await Promise.all([1, 2, 3].map(() => generateKeyPairSigner()));
  await local.cheats.airdrop(payer!.address, 10_000_000_000n);
  const ata = async (owner: string) =>
    (
      await findAssociatedTokenPda({
        owner: owner as never,
        mint: mint!.address,
        tokenProgram: TOKEN_PROGRAM_ADDRESS,
      })
    )[0];
  const [from, to] = [await ata(payer!.address), await ata(recipient!.address)];
  const send = async (instructions: Parameters<typeof signTransaction>[1]) => {
    const tx = await signTransaction(payer!, instructions, await wallet.blockhash());
    await wallet.send(tx);
    const landed = await wallet.transaction(tx.signature);
    assert.equal(landed?.meta?.err, null, landed?.meta?.logMessages?.join('\n'));
    return landed!.meta!;
  };
  await send([
    getCreateAccountInstruction({
      payer: payer!,
      newAccount: mint!,
      lamports: 10_000_000n,
      space: getMintSize(),
      programAddress: TOKEN_PROGRAM_ADDRESS,
    }),
    getInitializeMint2Instruction({ mint: mint!.address, decimals: 6, mintAuthority: payer!.address }),
    ...[payer!, recipient!].map((owner, i) =>
      getCreateAssociatedTokenIdempotentInstruction({
        payer: payer!,
        owner: owner.address,
        mint: mint!.address,
        ata: [from, to][i]!,
      }),
    ),
    getMintToInstruction({ mint: mint!.address, token: from, mintAuthority: payer!, amount: 1_000n }),
  ]);
  const meta = await send([
    getTransferInstruction({ source: from, destination: to, authority: payer!, amount: 400n }),
  ]);
  assert.deepEqual(meta.postTokenBalances?.map((b) => b.uiTokenAmount.amount).sort(), ['400', '600']);
  return meta.computeUnitsConsumed!;
}

describe('the Token program implementation', () => {
  test('the legacy program is spl_token 3.5.0, cut out of solana-bankrun whole', () => {
    const elf = legacyTokenProgram();
    assert.equal(createHash('sha256').update(elf).digest('hex'), LEGACY_TOKEN_PROGRAM_SHA256);
    assert.deepEqual([...elf.subarray(0, 4)], [0x7f, 0x45, 0x4c, 0x46]);
    assert.equal(legacyTokenProgram(), elf, 'read once per process');
  });

  const costs: Record<TokenProgramImplementation, (units: bigint) => boolean> = {
    'p-token': (units) => units < 200n,
    legacy: (units) => units > 2_000n,
  };
  for (const tokenProgram of ['p-token', 'legacy'] as const) {
    test(`${tokenProgram}: a wallet mints and transfers; the Transfer costs what the implementation costs`, async (t) => {
      const local = await startLocalChain({ rpcPort: 0, autoTick: false, tokenProgram });
      t.after(() => local.close());
      const units = await transferComputeUnits(local);
      assert.ok(costs[tokenProgram](units), `a ${tokenProgram} Transfer used ${units} CU`);
    });
  }

  test('tests choose the implementation with LOCAL_CHAIN_TOKEN_PROGRAM', () => {
    assert.equal(tokenProgramFromEnv({}), 'p-token');
    assert.equal(tokenProgramFromEnv({ LOCAL_CHAIN_TOKEN_PROGRAM: 'legacy' }), 'legacy');
    assert.throws(
      () => tokenProgramFromEnv({ LOCAL_CHAIN_TOKEN_PROGRAM: 'token-2022' }),
      /p-token or legacy/,
    );
    assert.equal(parseTokenProgram('p-token'), 'p-token');
  });
});
