import { type Address, generateKeyPairSigner, none, some } from '@solana/kit';
import { getMintEncoder, getMintSize, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { LocalChain } from '../../src/chain/local/start.ts';

/**
 * Creates a mint on the local chain as `surfnet_setAccount` would: an initialised SPL Token mint
 * account with the given decimals, rent exempt, at a fresh address.
 */
export async function createMint(
  local: LocalChain,
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
