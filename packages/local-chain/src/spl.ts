// Byte layouts of SPL Token mints and token accounts (identical in Token-2022 for the base fields),
// read straight from account data on the chain's hot paths (token balances of every transaction,
// scans of token accounts by owner), where keys stay raw bytes; cheats write with the token codec.
import { keyOfAddress } from './keys.ts';

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';

export const TOKEN_PROGRAM_KEY = keyOfAddress(TOKEN_PROGRAM);
export const TOKEN_2022_PROGRAM_KEY = keyOfAddress(TOKEN_2022_PROGRAM);

export const MINT_SIZE = 82;
export const TOKEN_ACCOUNT_SIZE = 165;
// Token-2022 accounts with extensions carry an AccountType byte right after the base layout.
const ACCOUNT_TYPE_OFFSET = 165;
const ACCOUNT_TYPE_MINT = 1;
const ACCOUNT_TYPE_ACCOUNT = 2;

const TOKEN_PROGRAM_BYTES = Buffer.from(TOKEN_PROGRAM_KEY, 'latin1');
const TOKEN_2022_PROGRAM_BYTES = Buffer.from(TOKEN_2022_PROGRAM_KEY, 'latin1');

/** Whether raw key bytes are one of the two token programs (no allocation: hot path). */
export function isTokenProgramBytes(key: Uint8Array): boolean {
  return TOKEN_PROGRAM_BYTES.equals(key) || TOKEN_2022_PROGRAM_BYTES.equals(key);
}

/** Reads a little-endian u64. */
export function readU64(data: Uint8Array, at: number): bigint {
  const view = new DataView(data.buffer, data.byteOffset + at, 8);
  return view.getBigUint64(0, true);
}

/** Whether token-program-owned data is an initialized token account. */
export function isTokenAccountData(data: Uint8Array): boolean {
  if (data.length < TOKEN_ACCOUNT_SIZE) return false;
  if (data.length > TOKEN_ACCOUNT_SIZE && data[ACCOUNT_TYPE_OFFSET] !== ACCOUNT_TYPE_ACCOUNT) return false;
  return data[108] !== 0;
}

/** Whether token-program-owned data is an initialized mint. */
export function isMintData(data: Uint8Array): boolean {
  if (data.length === MINT_SIZE) return data[45] === 1;
  return (
    data.length > ACCOUNT_TYPE_OFFSET && data[ACCOUNT_TYPE_OFFSET] === ACCOUNT_TYPE_MINT && data[45] === 1
  );
}

/** The decoded base fields of a token account. */
export interface TokenAccountFields {
  mint: Uint8Array;
  owner: Uint8Array;
  amount: bigint;
  delegate: Uint8Array | null;
  state: 'uninitialized' | 'initialized' | 'frozen';
  isNative: bigint | null;
  delegatedAmount: bigint;
  closeAuthority: Uint8Array | null;
}

/** Decodes the base fields of token account data (call isTokenAccountData first). */
export function readTokenAccount(data: Uint8Array): TokenAccountFields {
  const state = data[108] === 2 ? 'frozen' : data[108] === 1 ? 'initialized' : 'uninitialized';
  return {
    mint: data.subarray(0, 32),
    owner: data.subarray(32, 64),
    amount: readU64(data, 64),
    delegate: data[72] === 1 ? data.subarray(76, 108) : null,
    state,
    isNative: data[109] === 1 ? readU64(data, 113) : null,
    delegatedAmount: readU64(data, 121),
    closeAuthority: data[129] === 1 ? data.subarray(133, 165) : null,
  };
}

/** The decoded base fields of a mint. */
export interface MintFields {
  mintAuthority: Uint8Array | null;
  supply: bigint;
  decimals: number;
  isInitialized: boolean;
  freezeAuthority: Uint8Array | null;
}

/** Decodes the base fields of mint data (call isMintData first). */
export function readMint(data: Uint8Array): MintFields {
  return {
    mintAuthority: data[0] === 1 ? data.subarray(4, 36) : null,
    supply: readU64(data, 36),
    decimals: data[44] as number,
    isInitialized: data[45] === 1,
    freezeAuthority: data[46] === 1 ? data.subarray(50, 82) : null,
  };
}

/** A raw amount as the decimal string validators put in `uiAmountString`. */
export function uiAmountString(amount: bigint, decimals: number): string {
  if (decimals === 0) return amount.toString();
  const digits = amount.toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}
