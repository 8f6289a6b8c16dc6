// Decoding of mints, token accounts and the Clock sysvar from the raw accounts the RPC client reads.
import { type Address, type EncodedAccount, type ReadonlyUint8Array, unwrapOption } from '@solana/kit';
import {
  AccountState,
  getMintDecoder,
  getMintSize,
  getTokenDecoder,
  getTokenSize,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { ChainError } from './errors.ts';
import type { ChainClock, MintInfo, TokenAccountInfo } from './types.ts';

/** The Clock sysvar's address: a read of it may go with others in one call. */
export const CLOCK_SYSVAR = 'SysvarC1ock11111111111111111111111111111111' as Address;

const TOKEN_2022_PROGRAM_ADDRESS = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb' as Address;
// Both token programs share the base layouts; a Token-2022 account with extensions is longer than
// a token account and says what it is in the byte right after that size.
const EXTENDED_TYPE_OFFSET = getTokenSize();
const EXTENDED_MINT = 1;
const EXTENDED_TOKEN_ACCOUNT = 2;

const mintDecoder = getMintDecoder();
const tokenDecoder = getTokenDecoder();

function tokenProgramOwned(account: EncodedAccount): boolean {
  return (
    account.programAddress === TOKEN_PROGRAM_ADDRESS || account.programAddress === TOKEN_2022_PROGRAM_ADDRESS
  );
}

/** Whether token-program data has the base layout of `size` bytes, alone or extended as `extendedType`. */
function hasLayout(data: ReadonlyUint8Array, size: number, extendedType: number): boolean {
  if (data.length === size) return true;
  return data.length > EXTENDED_TYPE_OFFSET && data[EXTENDED_TYPE_OFFSET] === extendedType;
}

function invalidAccount(account: EncodedAccount, what: string): ChainError {
  return new ChainError('CHAIN_INVALID_ACCOUNT', `account ${account.address} is not ${what}`, {
    context: { address: account.address },
  });
}

/** Decodes a mint; CHAIN_INVALID_ACCOUNT when the account is not an initialized mint. */
export function decodeMintAccount(account: EncodedAccount): MintInfo {
  if (!tokenProgramOwned(account) || !hasLayout(account.data, getMintSize(), EXTENDED_MINT))
    throw invalidAccount(account, 'a mint');
  const mint = mintDecoder.decode(account.data);
  if (!mint.isInitialized) throw invalidAccount(account, 'a mint');
  return {
    address: account.address,
    programAddress: account.programAddress,
    decimals: mint.decimals,
    supply: mint.supply,
    mintAuthority: unwrapOption(mint.mintAuthority),
    freezeAuthority: unwrapOption(mint.freezeAuthority),
  };
}

/** Decodes a token account; CHAIN_INVALID_ACCOUNT when it is not an initialized token account. */
export function decodeTokenAccount(account: EncodedAccount): TokenAccountInfo {
  if (!tokenProgramOwned(account) || !hasLayout(account.data, getTokenSize(), EXTENDED_TOKEN_ACCOUNT))
    throw invalidAccount(account, 'a token account');
  const token = tokenDecoder.decode(account.data);
  if (token.state === AccountState.Uninitialized) throw invalidAccount(account, 'a token account');
  return {
    address: account.address,
    programAddress: account.programAddress,
    mint: token.mint,
    owner: token.owner,
    amount: token.amount,
    delegate: unwrapOption(token.delegate),
    delegatedAmount: token.delegatedAmount,
    state: token.state === AccountState.Frozen ? 'frozen' : 'initialized',
    closeAuthority: unwrapOption(token.closeAuthority),
    isNative: unwrapOption(token.isNative),
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
