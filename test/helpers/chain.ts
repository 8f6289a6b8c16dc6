import { type Address, generateKeyPairSigner, none, some } from '@solana/kit';
import { getMintEncoder, getMintSize, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { type LocalChain, type LocalChainOptions, startLocalChain } from '@transfer-router/local-chain';
import { tokenProgramFromEnv } from '@transfer-router/local-chain/testing';
import { createRpcChain } from '../../src/chain/rpc-chain.ts';
import type { Chain } from '../../src/chain/types.ts';

/** The local chain as the service's tests use it: the chain, and the service's RPC client on its endpoint. */
export interface TestChain extends LocalChain {
  /** The service's chain client (createRpcChain) connected to the local endpoint, as local mode connects it. */
  chain: Chain;
}

/**
 * Starts a local chain (on a free port unless told otherwise) with the service's client connected
 * to it, on the Token program LOCAL_CHAIN_TOKEN_PROGRAM names (p-token unless `legacy`).
 */
export async function startTestChain(options: LocalChainOptions = {}): Promise<TestChain> {
  const local = await startLocalChain({ rpcPort: 0, tokenProgram: tokenProgramFromEnv(), ...options });
  return { ...local, chain: createRpcChain({ rpcUrl: local.rpcUrl }) };
}

/**
 * Creates a mint on the local chain as `surfnet_setAccount` would: an initialised SPL Token mint
 * account with the given decimals, rent exempt, at a fresh address.
 */
export async function createMint(
  local: TestChain,
  options: { decimals: number; programAddress?: Address } = { decimals: 6 },
): Promise<Address> {
  const mint = (await generateKeyPairSigner()).address;
  const authority = (await generateKeyPairSigner()).address;
  const data = getMintEncoder().encode({
    mintAuthority: some(authority),
    supply: 0n,
    decimals: options.decimals,
    isInitialized: true,
    freezeAuthority: none(),
  });
  await local.cheats.setAccount(mint, {
    lamports: await local.chain.getMinimumBalanceForRentExemption(getMintSize()),
    owner: options.programAddress ?? TOKEN_PROGRAM_ADDRESS,
    data: new Uint8Array(data),
  });
  return mint;
}
