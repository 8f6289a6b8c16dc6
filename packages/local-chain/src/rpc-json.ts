// JSON shapes of the Solana JSON-RPC API as validators produce them: accounts in every encoding
// wallets ask for, parsed token accounts and mints, account filters, transactions and their
// metadata, memos.
import { zstdCompressSync } from 'node:zlib';
import { decodeBase58, encodeBase58 } from './base58.ts';
import type { InnerInstructionRecord, TokenBalanceRecord, TxRecord } from './history.ts';
import { keyOf, keyOfAddress } from './keys.ts';
import type { Ledger } from './ledger.ts';
import {
  isMintData,
  isTokenAccountData,
  readMint,
  readTokenAccount,
  TOKEN_2022_PROGRAM_KEY,
  TOKEN_PROGRAM_KEY,
  uiAmountString,
} from './spl.ts';
import type { LedgerAccount } from './transactions.ts';
import { decodeWireTransaction, isStaticKeyWritable, lookupsOf } from './wire.ts';

/** A JSON-RPC error answer. */
export class RpcError extends Error {
  override name = 'RpcError';
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

/** A JSON-RPC error answer body. */
export function errorBody(id: unknown, code: number, message: string, data?: unknown) {
  const error: Record<string, unknown> = { code, message };
  if (data !== undefined) error.data = data;
  return { jsonrpc: '2.0', error, id: id ?? null };
}

/** Raised for malformed parameters (-32602). */
export function invalidParams(message: string): RpcError {
  return new RpcError(-32602, message);
}

const rawJson = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

/** A u64 for JSON: a plain number when exact, else the raw digits (as validators send them). */
export function u64(value: bigint | number): unknown {
  if (typeof value === 'number') return value;
  return value <= 9007199254740991n ? Number(value) : rawJson(value.toString());
}

const b64 = (bytes: Uint8Array) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

/** Encodings of account data. */
export type AccountEncoding = 'binary' | 'base58' | 'base64' | 'base64+zstd' | 'jsonParsed';

const ACCOUNT_ENCODINGS = new Set<string>(['binary', 'base58', 'base64', 'base64+zstd', 'jsonParsed']);
const MAX_BASE58_BYTES = 128;
const UPGRADEABLE_LOADER_KEY = keyOfAddress('BPFLoaderUpgradeab1e11111111111111111111111');
const MEMO_PROGRAMS = new Set<string>([
  'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr',
  'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo',
]);

/** Validates an `encoding` config value of account methods (default `binary`). */
export function accountEncoding(value: unknown): AccountEncoding {
  if (value === undefined || value === null) return 'binary';
  if (typeof value !== 'string' || !ACCOUNT_ENCODINGS.has(value))
    throw invalidParams(`Invalid param: unknown encoding ${String(value)}`);
  return value as AccountEncoding;
}

/** A `dataSlice` config value. */
export interface DataSlice {
  offset: number;
  length: number;
}

/** Validates a `dataSlice` config value. */
export function dataSlice(value: unknown): DataSlice | undefined {
  if (value === undefined || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (
    !Number.isSafeInteger(v.offset) ||
    !Number.isSafeInteger(v.length) ||
    (v.offset as number) < 0 ||
    (v.length as number) < 0
  ) {
    throw invalidParams('Invalid param: dataSlice needs non-negative integer offset and length');
  }
  return { offset: v.offset as number, length: v.length as number };
}

function uiTokenAmount(amount: bigint, decimals: number) {
  return {
    amount: amount.toString(),
    decimals,
    uiAmount: Number(amount) / 10 ** decimals,
    uiAmountString: uiAmountString(amount, decimals),
  };
}

function parsedAccountData(ledger: Ledger, account: LedgerAccount): unknown | undefined {
  const ownerKey = keyOf(account.owner);
  const data = account.data;
  if (ownerKey === TOKEN_PROGRAM_KEY || ownerKey === TOKEN_2022_PROGRAM_KEY) {
    const program = ownerKey === TOKEN_PROGRAM_KEY ? 'spl-token' : 'spl-token-2022';
    if (isTokenAccountData(data)) {
      const t = readTokenAccount(data);
      const mint = ledger.getAccount(t.mint);
      if (!mint || !isMintData(mint.data)) return undefined;
      const decimals = readMint(mint.data).decimals;
      const info: Record<string, unknown> = {
        isNative: t.isNative !== null,
        mint: encodeBase58(t.mint),
        owner: encodeBase58(t.owner),
        state: t.state,
        tokenAmount: uiTokenAmount(t.amount, decimals),
      };
      if (t.delegate) {
        info.delegate = encodeBase58(t.delegate);
        info.delegatedAmount = uiTokenAmount(t.delegatedAmount, decimals);
      }
      if (t.isNative !== null) info.rentExemptReserve = uiTokenAmount(t.isNative, decimals);
      if (t.closeAuthority) info.closeAuthority = encodeBase58(t.closeAuthority);
      return { program, parsed: { info, type: 'account' }, space: data.length };
    }
    if (isMintData(data)) {
      const m = readMint(data);
      return {
        program,
        parsed: {
          info: {
            decimals: m.decimals,
            freezeAuthority: m.freezeAuthority && encodeBase58(m.freezeAuthority),
            isInitialized: m.isInitialized,
            mintAuthority: m.mintAuthority && encodeBase58(m.mintAuthority),
            supply: m.supply.toString(),
          },
          type: 'mint',
        },
        space: data.length,
      };
    }
    return undefined;
  }
  if (ownerKey === UPGRADEABLE_LOADER_KEY && data.length >= 4) {
    const tag = data[0];
    if (tag === 2 && data.length >= 36) {
      return {
        program: 'bpf-upgradeable-loader',
        parsed: { info: { programData: encodeBase58(data.subarray(4, 36)) }, type: 'program' },
        space: data.length,
      };
    }
    if (tag === 3 && data.length >= 45) {
      const slot = new DataView(data.buffer, data.byteOffset + 4, 8).getBigUint64(0, true);
      return {
        program: 'bpf-upgradeable-loader',
        parsed: {
          info: {
            authority: data[12] === 1 ? encodeBase58(data.subarray(13, 45)) : null,
            data: [b64(data.subarray(45)), 'base64'],
            slot: u64(slot),
          },
          type: 'programData',
        },
        space: data.length,
      };
    }
  }
  return undefined;
}

/** An account as getAccountInfo returns it in the given encoding. */
export function encodeAccount(
  ledger: Ledger,
  account: LedgerAccount,
  encoding: AccountEncoding,
  slice?: DataSlice,
) {
  const size = slice
    ? account.data.subarray(slice.offset, slice.offset + slice.length).length
    : account.data.length;
  if ((encoding === 'binary' || encoding === 'base58') && size > MAX_BASE58_BYTES) {
    throw new RpcError(
      -32600,
      `Encoded binary (base 58) data should be less than ${MAX_BASE58_BYTES} bytes, please use Base64 encoding.`,
    );
  }
  return uiAccount(ledger, account, encoding, slice);
}

/** An account as subscriptions notify it: like encodeAccount, but base58 data of any size. */
export function uiAccount(
  ledger: Ledger,
  account: LedgerAccount,
  encoding: AccountEncoding,
  slice?: DataSlice,
) {
  let data: unknown;
  const bytes = slice ? account.data.subarray(slice.offset, slice.offset + slice.length) : account.data;
  switch (encoding) {
    case 'binary':
    case 'base58':
      data = encoding === 'binary' ? encodeBase58(bytes) : [encodeBase58(bytes), 'base58'];
      break;
    case 'base64':
      data = [b64(bytes), 'base64'];
      break;
    case 'base64+zstd':
      data = [b64(zstdCompressSync(bytes)), 'base64+zstd'];
      break;
    case 'jsonParsed':
      data = (!slice && parsedAccountData(ledger, account)) || [b64(bytes), 'base64'];
      break;
  }
  return {
    data,
    executable: account.executable,
    lamports: u64(account.lamports),
    owner: encodeBase58(account.owner),
    rentEpoch: u64(account.rentEpoch),
    space: account.data.length,
  };
}

/** Validates the `filters` of getProgramAccounts and programSubscribe; returns their test of account data. */
export function accountFilter(filters: unknown): (data: Uint8Array) => boolean {
  if (filters === undefined || filters === null) return () => true;
  if (!Array.isArray(filters)) throw invalidParams('Invalid params: filters must be an array');
  const tests = filters.map((f: Record<string, unknown>): ((data: Uint8Array) => boolean) => {
    if (f?.dataSize !== undefined) {
      const size = f.dataSize;
      if (!Number.isSafeInteger(size)) throw invalidParams('Invalid params: dataSize must be an integer');
      return (data) => data.length === size;
    }
    const memcmp = f?.memcmp as Record<string, unknown> | undefined;
    if (!memcmp) throw invalidParams('Invalid params: unknown filter');
    const offset = memcmp.offset;
    if (!Number.isSafeInteger(offset) || (offset as number) < 0)
      throw invalidParams('Invalid params: memcmp.offset must be an integer');
    const expected =
      typeof memcmp.bytes !== 'string'
        ? null
        : memcmp.encoding === 'base64'
          ? new Uint8Array(Buffer.from(memcmp.bytes, 'base64'))
          : decodeBase58(memcmp.bytes);
    if (!expected) throw invalidParams('Invalid param: memcmp bytes');
    const at = offset as number;
    return (data) => data.length >= at + expected.length && expected.every((b, i) => data[at + i] === b);
  });
  return (data) => tests.every((test) => test(data));
}

function uiTokenBalance(t: TokenBalanceRecord) {
  return {
    accountIndex: t.accountIndex,
    mint: encodeBase58(t.mint),
    owner: encodeBase58(t.owner),
    programId: encodeBase58(t.programId),
    uiTokenAmount: uiTokenAmount(t.amount, t.decimals),
  };
}

/** A transaction error's `status` field (`{ Ok: null }` or `{ Err: ... }`). */
export function statusOf(record: TxRecord) {
  return record.err ? { Err: record.err.json } : { Ok: null };
}

function innerInstructionJson(ix: InnerInstructionRecord, keys: string[], parsed: boolean) {
  if (parsed) {
    return {
      accounts: [...ix.accounts].map((i) => keys[i]),
      data: encodeBase58(ix.data),
      programId: keys[ix.programIdIndex],
      stackHeight: ix.stackHeight,
    };
  }
  return {
    accounts: [...ix.accounts],
    data: encodeBase58(ix.data),
    programIdIndex: ix.programIdIndex,
    stackHeight: ix.stackHeight,
  };
}

/** Transaction encodings of getTransaction and getBlock. */
export type TransactionEncoding = 'json' | 'jsonParsed' | 'base58' | 'base64';

/** How a transaction is given: whole, or (getBlock's `accounts`) its keys and balances only. */
export interface TransactionShape {
  encoding: TransactionEncoding;
  /** Adds the `version` field (when the client gave `maxSupportedTransactionVersion`). */
  withVersion: boolean;
  details?: 'full' | 'accounts';
  rewards?: boolean;
}

/** A recorded transaction and its metadata, as getTransaction and getBlock give them. */
export function encodeTransaction(record: TxRecord, shape: TransactionShape) {
  const tx = decodeWireTransaction(record.wire);
  const { message } = tx;
  // A v0 transaction is given only to clients that say they read it.
  if (message.version === 0 && !shape.withVersion) {
    throw new RpcError(
      -32015,
      'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
    );
  }
  const staticKeys = message.staticAccounts;
  const loadedWritable = record.loadedWritable.map(encodeBase58);
  const loadedReadonly = record.loadedReadonly.map(encodeBase58);
  const keys = [...staticKeys, ...loadedWritable, ...loadedReadonly];
  const parsedKeys = () => [
    ...staticKeys.map((pubkey, i) => ({
      pubkey,
      signer: i < message.header.numSignerAccounts,
      source: 'transaction',
      writable: isStaticKeyWritable(message, i),
    })),
    ...loadedWritable.map((pubkey) => ({ pubkey, signer: false, source: 'lookupTable', writable: true })),
    ...loadedReadonly.map((pubkey) => ({ pubkey, signer: false, source: 'lookupTable', writable: false })),
  ];
  const parsed = shape.encoding === 'jsonParsed';
  const meta: Record<string, unknown> = {
    err: record.err?.json ?? null,
    fee: u64(record.fee),
    postBalances: record.postBalances.map(u64),
    postTokenBalances: record.postTokenBalances.map(uiTokenBalance),
    preBalances: record.preBalances.map(u64),
    preTokenBalances: record.preTokenBalances.map(uiTokenBalance),
    status: statusOf(record),
  };
  if (shape.rewards ?? true) meta.rewards = [];
  let transaction: unknown;
  if (shape.details === 'accounts') {
    transaction = { accountKeys: parsedKeys(), signatures: tx.signatures.map(encodeBase58) };
  } else {
    meta.computeUnitsConsumed = u64(record.unitsConsumed);
    meta.innerInstructions = record.innerInstructions.map((set) => ({
      index: set.index,
      instructions: set.instructions.map((ix) => innerInstructionJson(ix, keys, parsed)),
    }));
    meta.loadedAddresses = { readonly: loadedReadonly, writable: loadedWritable };
    meta.logMessages = record.logs;
    if (record.returnData) {
      meta.returnData = {
        data: [b64(record.returnData.data), 'base64'],
        programId: encodeBase58(record.returnData.programId),
      };
    }
    if (shape.encoding === 'base64') transaction = [b64(record.wire), 'base64'];
    else if (shape.encoding === 'base58') transaction = [encodeBase58(record.wire), 'base58'];
    else {
      const jsonMessage: Record<string, unknown> = {
        accountKeys: parsed ? parsedKeys() : staticKeys,
        header: parsed
          ? undefined
          : {
              numReadonlySignedAccounts: message.header.numReadonlySignerAccounts,
              numReadonlyUnsignedAccounts: message.header.numReadonlyNonSignerAccounts,
              numRequiredSignatures: message.header.numSignerAccounts,
            },
        instructions: message.instructions.map((ix) => {
          const accounts = ix.accountIndices ?? [];
          const data = encodeBase58(ix.data ?? new Uint8Array(0));
          return parsed
            ? {
                accounts: accounts.map((i) => keys[i]),
                data,
                programId: keys[ix.programAddressIndex],
                stackHeight: null,
              }
            : { accounts, data, programIdIndex: ix.programAddressIndex, stackHeight: null };
        }),
        recentBlockhash: message.lifetimeToken,
      };
      if (message.version === 0) {
        jsonMessage.addressTableLookups = lookupsOf(message).map((l) => ({
          accountKey: l.lookupTableAddress,
          readonlyIndexes: l.readonlyIndexes,
          writableIndexes: l.writableIndexes,
        }));
      }
      transaction = { message: jsonMessage, signatures: tx.signatures.map(encodeBase58) };
    }
  }
  const out: Record<string, unknown> = { meta, transaction };
  if (shape.withVersion) out.version = message.version;
  return out;
}

/** The memos of a transaction's memo instructions, as getSignaturesForAddress gives them, or null. */
export function memoOf(record: TxRecord): string | null {
  const { message } = decodeWireTransaction(record.wire);
  const memos = message.instructions
    .filter((ix) => MEMO_PROGRAMS.has(message.staticAccounts[ix.programAddressIndex] ?? ''))
    .map((ix) => {
      const data = ix.data ?? new Uint8Array(0);
      let memo: string;
      try {
        memo = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(data));
      } catch {
        memo = '(unparseable)';
      }
      return `[${data.length}] ${memo}`;
    });
  return memos.length === 0 ? null : memos.join('; ');
}

/** Inner instructions of a simulation, compiled form. */
export function encodeInnerInstructions(sets: { index: number; instructions: InnerInstructionRecord[] }[]) {
  return sets.map((set) => ({
    index: set.index,
    instructions: set.instructions.map((ix) => innerInstructionJson(ix, [], false)),
  }));
}
