// The router program's committed artifact deploys on the local chain through its `programs` option,
// as local mode deploys it, and the service's chain client sees it as a deployed program.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { generateKeyPairSigner } from '@solana/kit';
import { startLocalChain } from '@transfer-router/local-chain';
import { createRpcChain } from '../../src/chain/rpc-chain.ts';

test("the project's router artifact deploys through the local chain's programs option", async (t) => {
  const elf = await readFile(new URL('../../programs/router/build/router-v0.so', import.meta.url));
  const programId = (await generateKeyPairSigner()).address;
  const local = await startLocalChain({ rpcPort: 0, autoTick: false, programs: [{ programId, elf }] });
  t.after(() => local.close());
  const program = await createRpcChain({ rpcUrl: local.rpcUrl }).getAccount(programId);
  assert.equal(program?.executable, true);
  assert.equal(program?.programAddress, 'BPFLoaderUpgradeab1e11111111111111111111111');
});
