// Decoding of mints, token accounts and the Clock sysvar from the raw accounts the RPC client reads.
import { type Address, type EncodedAccount, getAddressDecoder } from '@solana/kit';
import { ChainError } from './errors.ts';
import {
  isMintData,
  isTokenAccountData,
  readMint,
  readTokenAccount,
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
} from './spl.ts';
import type { ChainClock, MintInfo, TokenAccountInfo } from './types.ts';

/** The Clock sysvar's address: a read of it may go with others in one call. */
export const CLOCK_SYSVAR = 'SysvarC1ock11111111111111111111111111111111' as Address;

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

/** Decodes the Clock sysvar (slot, epoch, unix time); CHAIN_BAD_RESPONSE when it is missing. */
export function decodeClockAccount(account: EncodedAccount | null): ChainClock {
  if (!account || account.data.length < 40)
    throw new ChainError('CHAIN_BAD_RESPONSE', 'the Clock sysvar is missing');
  const data = account.data as Uint8Array;
  const view = new DataView(data.buffer, data.byteOffset, 40);
  return {
    slot: view.getBigUint64(0, true),
    epoch: view.getBigUint64(16, true),
    unixTimestamp: view.getBigInt64(32, true),
  };
}

/** The error for an account a call needed but that does not exist. */
export function accountNotFound(address: string): ChainError {
  return new ChainError('CHAIN_ACCOUNT_NOT_FOUND', `account ${address} does not exist`, {
    context: { address },
  });
}
