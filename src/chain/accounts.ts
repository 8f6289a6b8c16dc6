// Decoding of mints and token accounts from the raw accounts the RPC client reads.
import { type EncodedAccount, getAddressDecoder } from '@solana/kit';
import { ChainError } from './errors.ts';
import {
  isMintData,
  isTokenAccountData,
  readMint,
  readTokenAccount,
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
} from './spl.ts';
import type { MintInfo, TokenAccountInfo } from './types.ts';

const addressDecoder = getAddressDecoder();
const asAddress = (bytes: Uint8Array) => addressDecoder.decode(bytes);

function tokenProgramOwned(account: EncodedAccount): boolean {
  return account.programAddress === TOKEN_PROGRAM || account.programAddress === TOKEN_2022_PROGRAM;
}

/** Decodes a mint; CHAIN_INVALID_ACCOUNT when the account is not an initialized mint. */
export function decodeMintAccount(account: EncodedAccount): MintInfo {
  const data = account.data as Uint8Array;
  if (!tokenProgramOwned(account) || !isMintData(data)) {
    throw new ChainError('CHAIN_INVALID_ACCOUNT', `account ${account.address} is not a mint`, {
      context: { address: account.address },
    });
  }
  const mint = readMint(data);
  return {
    address: account.address,
    programAddress: account.programAddress,
    decimals: mint.decimals,
    supply: mint.supply,
    mintAuthority: mint.mintAuthority && asAddress(mint.mintAuthority),
    freezeAuthority: mint.freezeAuthority && asAddress(mint.freezeAuthority),
  };
}

/** Decodes a token account; CHAIN_INVALID_ACCOUNT when it is not an initialized token account. */
export function decodeTokenAccount(account: EncodedAccount): TokenAccountInfo {
  const data = account.data as Uint8Array;
  if (!tokenProgramOwned(account) || !isTokenAccountData(data)) {
    throw new ChainError('CHAIN_INVALID_ACCOUNT', `account ${account.address} is not a token account`, {
      context: { address: account.address },
    });
  }
  const fields = readTokenAccount(data);
  return {
    address: account.address,
    programAddress: account.programAddress,
    mint: asAddress(fields.mint),
    owner: asAddress(fields.owner),
    amount: fields.amount,
    delegate: fields.delegate && asAddress(fields.delegate),
    delegatedAmount: fields.delegatedAmount,
    state: fields.state === 'frozen' ? 'frozen' : 'initialized',
    closeAuthority: fields.closeAuthority && asAddress(fields.closeAuthority),
    isNative: fields.isNative,
  };
}

/** The error for an account a call needed but that does not exist. */
export function accountNotFound(address: string): ChainError {
  return new ChainError('CHAIN_ACCOUNT_NOT_FOUND', `account ${address} does not exist`, {
    context: { address },
  });
}
