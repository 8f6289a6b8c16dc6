// The JSON-RPC methods of the local endpoint, written as a plain table (method name -> handler)
// because each one is a thin translation between a validator's request/response shapes and the
// ledger. Parameter checks and error codes follow what Agave validators answer.
import { crc32 } from 'node:zlib';
import { decodeBase58, decodeBase58Exact, encodeBase58 } from './base58.ts';
import { type AccountPatch, LedgerInputError, type TokenAccountPatch } from './cheats.ts';
import { keyOf } from './keys.ts';
import type { Commitment, Ledger } from './ledger.ts';
import {
  accountEncoding,
  accountFilter,
  dataSlice,
  encodeAccount,
  encodeInnerInstructions,
  encodeTransaction,
  invalidParams,
  memoOf,
  RpcError,
  statusOf,
  type TransactionEncoding,
  u64,
} from './rpc-json.ts';
import { SLOTS_PER_EPOCH } from './slots.ts';
import {
  isMintData,
  isTokenAccountData,
  readMint,
  readTokenAccount,
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
  uiAmountString,
} from './spl.ts';
import type { SubmitOutcome } from './transactions.ts';
import { decodeWireMessage, PACKET_DATA_SIZE, WireFormatError } from './wire.ts';

/** The Agave version LiteSVM embeds, reported as the node's version. */
export const SOLANA_CORE_VERSION = '4.3.0';
const FEATURE_SET = crc32(`litesvm-1.5.0/agave-${SOLANA_CORE_VERSION}`);
const MAX_BASE58_TX_SIZE = 1683;
const MAX_BASE64_TX_SIZE = 1644;
const MAX_MULTIPLE_ACCOUNTS = 100;
const MAX_SIGNATURE_STATUSES = 256;
const MAX_TX_ACCOUNT_LOCKS = 128;
const MAX_BLOCK_RANGE = 500_000;
const MAX_SIGNATURES_FOR_ADDRESS = 1000;
const TRANSACTION_ENCODINGS = new Set(['json', 'jsonParsed', 'base58', 'base64']);
const TRANSACTION_DETAILS = new Set(['full', 'accounts', 'signatures', 'none']);

/** A method handler: params in, JSON-ready result (or a promise of it) out. */
export type RpcHandler = (params: unknown[], ledger: Ledger) => unknown;

type Config = Record<string, unknown>;

function config(params: unknown[], index: number): Config {
  const value = params[index];
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw invalidParams('Invalid params: expected a config object');
  return value as Config;
}

const COMMITMENTS = new Set(['processed', 'confirmed', 'finalized']);

/** The commitment a request reads at: its own, else `finalized`, as validators default to. */
function commitmentOf(cfg: Config): Commitment {
  const commitment = cfg.commitment ?? 'finalized';
  if (typeof commitment !== 'string' || !COMMITMENTS.has(commitment))
    throw invalidParams(`Invalid param: unknown commitment ${String(commitment)}`);
  return commitment as Commitment;
}

/** Checks `minContextSlot` and returns the slot a response's context carries: the one its commitment reads. */
function contextSlot(ledger: Ledger, cfg: Config): number {
  const slot = ledger.slot(commitmentOf(cfg));
  const min = cfg.minContextSlot;
  if (min !== undefined && min !== null) {
    if (typeof min !== 'number' && typeof min !== 'bigint')
      throw invalidParams('Invalid param: minContextSlot');
    if (BigInt(min) > BigInt(slot)) {
      throw new RpcError(-32016, 'Minimum context slot has not been reached', { contextSlot: slot });
    }
  }
  return slot;
}

function withContext(slot: number, value: unknown) {
  return { context: { apiVersion: SOLANA_CORE_VERSION, slot }, value };
}

function pubkey(value: unknown): Uint8Array {
  if (typeof value !== 'string') throw invalidParams('Invalid params: expected a base58 pubkey string');
  const raw = decodeBase58(value);
  if (!raw) throw invalidParams('Invalid param: Invalid');
  if (raw.length !== 32) throw invalidParams('Invalid param: WrongSize');
  return raw;
}

function signature(value: unknown): string {
  if (typeof value !== 'string' || !decodeBase58Exact(value, 64))
    throw invalidParams('Invalid param: Invalid');
  return value;
}

function integer(value: unknown, what: string): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  throw invalidParams(`Invalid params: ${what} must be an integer`);
}

function decodeTransactionParam(value: unknown, cfg: Config): Uint8Array {
  if (typeof value !== 'string')
    throw invalidParams('Invalid params: expected an encoded transaction string');
  const encoding = cfg.encoding ?? 'base58';
  const type = 'solana_transaction::versioned::VersionedTransaction';
  let bytes: Uint8Array | null;
  if (encoding === 'base58') {
    if (value.length > MAX_BASE58_TX_SIZE) {
      throw invalidParams(
        `base58 encoded ${type} too large: ${value.length} bytes (max: encoded/raw ${MAX_BASE58_TX_SIZE}/${PACKET_DATA_SIZE})`,
      );
    }
    bytes = decodeBase58(value);
    if (!bytes) throw invalidParams('invalid base58 encoding: InvalidCharacter');
  } else if (encoding === 'base64') {
    if (value.length > MAX_BASE64_TX_SIZE) {
      throw invalidParams(
        `base64 encoded ${type} too large: ${value.length} bytes (max: encoded/raw ${MAX_BASE64_TX_SIZE}/${PACKET_DATA_SIZE})`,
      );
    }
    // Buffer.from skips characters outside the alphabet; re-encoding proves the text canonical.
    const decoded = Buffer.from(value, 'base64');
    if (decoded.toString('base64') !== value) throw invalidParams('invalid base64 encoding: InvalidByte');
    bytes = decoded;
  } else {
    throw invalidParams(`unsupported encoding: ${String(encoding)}. Supported encodings: base58, base64`);
  }
  if (bytes.length > PACKET_DATA_SIZE) {
    throw invalidParams(`decoded ${type} too large: ${bytes.length} bytes (max: ${PACKET_DATA_SIZE} bytes)`);
  }
  return bytes;
}

function wireError(error: unknown): never {
  if (error instanceof WireFormatError) {
    throw invalidParams(
      `failed to deserialize solana_transaction::versioned::VersionedTransaction: ${error.message}`,
    );
  }
  throw error;
}

function simulationFailure(outcome: Extract<SubmitOutcome, { kind: 'rejected' }>): RpcError {
  return new RpcError(-32002, `Transaction simulation failed: ${outcome.error.message}`, {
    accounts: null,
    err: outcome.error.json,
    fee: null,
    innerInstructions: null,
    loadedAccountsDataSize: null,
    loadedAddresses: null,
    logs: outcome.logs,
    postBalances: null,
    postTokenBalances: null,
    preBalances: null,
    preTokenBalances: null,
    replacementBlockhash: null,
    returnData: null,
    unitsConsumed: u64(outcome.unitsConsumed),
  });
}

/** Maps a submit outcome to what sendTransaction answers. */
function sendResult(outcome: SubmitOutcome): string {
  switch (outcome.kind) {
    case 'landed':
    case 'queued':
    case 'dropped':
      return outcome.signature;
    case 'rejected':
      throw simulationFailure(outcome);
    case 'signature-failure':
      throw new RpcError(-32003, 'Transaction signature verification failure');
    case 'invalid':
      throw invalidParams(`invalid transaction: ${outcome.error.message}`);
  }
}

function optionalKey(value: unknown): Uint8Array | null {
  return value === null ? null : pubkey(value);
}

function hexBytes(value: unknown): Uint8Array {
  if (typeof value !== 'string' || !/^([0-9a-fA-F]{2})*$/.test(value))
    throw invalidParams('Invalid hex data provided');
  return new Uint8Array(Buffer.from(value, 'hex'));
}

function timeTravelTarget(value: unknown, now: number) {
  if (value === undefined || value === null) return { absoluteTimestamp: now + 3_600_000 };
  const v = value as Config;
  const fields = ['absoluteTimestamp', 'absoluteSlot', 'absoluteEpoch'].filter((k) => v[k] !== undefined);
  if (fields.length !== 1)
    throw invalidParams('Invalid params: give exactly one of absoluteTimestamp, absoluteSlot, absoluteEpoch');
  const field = fields[0] as 'absoluteTimestamp' | 'absoluteSlot' | 'absoluteEpoch';
  const number = Number(integer(v[field], field));
  return { [field]: number };
}

function tokenProgramParam(value: unknown): Uint8Array {
  if (value === undefined || value === null) return pubkey(TOKEN_PROGRAM);
  const key = pubkey(value);
  const text = encodeBase58(key);
  if (text !== TOKEN_PROGRAM && text !== TOKEN_2022_PROGRAM)
    throw invalidParams('Invalid param: unrecognized Token program id');
  return key;
}

// History methods answer only what is at least confirmed.
function atLeastConfirmed(cfg: Config): Commitment {
  const commitment = commitmentOf(cfg);
  if (commitment === 'processed') throw invalidParams('Method does not support commitment below `confirmed`');
  return commitment;
}

function slotParam(value: unknown): number {
  const slot = integer(value, 'slot');
  if (slot < 0n) throw invalidParams('Invalid params: slot must not be negative');
  return Number(slot);
}

function transactionEncoding(value: unknown): TransactionEncoding {
  const encoding = value ?? 'json';
  if (typeof encoding !== 'string' || !TRANSACTION_ENCODINGS.has(encoding))
    throw invalidParams(`Invalid param: unknown encoding ${String(encoding)}`);
  return encoding as TransactionEncoding;
}

// Blocks exist from the first one the chain still has whole to the newest at the read's commitment,
// except those rolled back.
function checkBlockAvailable(ledger: Ledger, slot: number, commitment: Commitment) {
  if (slot > ledger.slot(commitment)) throw new RpcError(-32004, `Block not available for slot ${slot}`);
  if (ledger.isSkipped(slot)) {
    throw new RpcError(-32007, `Slot ${slot} was skipped, or missing due to ledger jump to recent snapshot`);
  }
  const first = ledger.firstAvailableBlock();
  if (slot < first) {
    throw new RpcError(
      -32001,
      `Block ${slot} cleaned up, does not exist on node. First available block: ${first}`,
    );
  }
}

function slotRange(ledger: Ledger, from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i).filter(
    (slot) => !ledger.isSkipped(slot),
  );
}

async function cheat<T>(run: () => T | Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof LedgerInputError) throw invalidParams(error.message);
    throw error;
  }
}

/** Every method the local endpoint answers over HTTP. */
export const rpcMethods: Record<string, RpcHandler> = {
  getHealth: () => 'ok',
  getVersion: () => ({ 'feature-set': FEATURE_SET, 'solana-core': SOLANA_CORE_VERSION }),
  getGenesisHash: (_params, ledger) => ledger.genesisHash,
  getIdentity: (_params, ledger) => ({ identity: ledger.faucetAddress }),
  getSlot: (params, ledger) => contextSlot(ledger, config(params, 0)),
  getBlockHeight: (params, ledger) => contextSlot(ledger, config(params, 0)),
  getTransactionCount: (params, ledger) => {
    contextSlot(ledger, config(params, 0));
    return ledger.epochInfo().transactionCount;
  },
  getEpochInfo: (params, ledger) => {
    const cfg = config(params, 0);
    contextSlot(ledger, cfg);
    return ledger.epochInfo(commitmentOf(cfg));
  },
  getEpochSchedule: () => ({
    firstNormalEpoch: 0,
    firstNormalSlot: 0,
    leaderScheduleSlotOffset: SLOTS_PER_EPOCH,
    slotsPerEpoch: SLOTS_PER_EPOCH,
    warmup: false,
  }),
  getLatestBlockhash: (params, ledger) => {
    const cfg = config(params, 0);
    const slot = contextSlot(ledger, cfg);
    return withContext(slot, ledger.latestBlockhash(commitmentOf(cfg)));
  },
  isBlockhashValid: (params, ledger) => {
    const slot = contextSlot(ledger, config(params, 1));
    const hash = params[0];
    if (typeof hash !== 'string' || !decodeBase58Exact(hash, 32))
      throw invalidParams('Invalid param: Invalid');
    return withContext(slot, ledger.isBlockhashValid(hash));
  },
  getFeeForMessage: (params, ledger) => {
    const slot = contextSlot(ledger, config(params, 1));
    if (typeof params[0] !== 'string') throw invalidParams('Invalid params: expected a base64 message');
    let fee: bigint | null;
    try {
      fee = ledger.feeForMessage(decodeWireMessage(new Uint8Array(Buffer.from(params[0], 'base64'))));
    } catch (error) {
      if (error instanceof WireFormatError) throw invalidParams(`invalid message: ${error.message}`);
      throw error;
    }
    return withContext(slot, fee === null ? null : u64(fee));
  },
  getRecentPrioritizationFees: (params, ledger) => {
    const addresses = params[0] ?? [];
    if (!Array.isArray(addresses)) throw invalidParams('Invalid params: expected an array of pubkeys');
    if (addresses.length > MAX_TX_ACCOUNT_LOCKS)
      throw invalidParams(`Too many inputs provided; max ${MAX_TX_ACCOUNT_LOCKS}`);
    for (const address of addresses) pubkey(address);
    return ledger
      .recentPrioritizationFees(addresses as string[])
      .map(({ slot, prioritizationFee }) => ({ prioritizationFee: u64(prioritizationFee), slot }));
  },
  getMinimumBalanceForRentExemption: (params, ledger) => {
    const size = integer(params[0] ?? 0, 'data length');
    if (size < 0n || size > 10_485_760n) throw invalidParams('Invalid param: data length out of range');
    return u64(ledger.minimumBalanceForRentExemption(Number(size)));
  },
  getBalance: (params, ledger) => {
    const key = pubkey(params[0]);
    const cfg = config(params, 1);
    const slot = contextSlot(ledger, cfg);
    return withContext(slot, u64(ledger.getBalance(key, commitmentOf(cfg))));
  },
  getAccountInfo: (params, ledger) => {
    const key = pubkey(params[0]);
    const cfg = config(params, 1);
    const encoding = accountEncoding(cfg.encoding);
    const slice = dataSlice(cfg.dataSlice);
    const slot = contextSlot(ledger, cfg);
    const account = ledger.getAccount(key, commitmentOf(cfg));
    return withContext(slot, account && encodeAccount(ledger, account, encoding, slice));
  },
  getMultipleAccounts: (params, ledger) => {
    if (!Array.isArray(params[0])) throw invalidParams('Invalid params: expected an array of pubkeys');
    if (params[0].length > MAX_MULTIPLE_ACCOUNTS)
      throw invalidParams(`Too many inputs provided; max ${MAX_MULTIPLE_ACCOUNTS}`);
    const keys = params[0].map(pubkey);
    const cfg = config(params, 1);
    const encoding = accountEncoding(cfg.encoding);
    const slice = dataSlice(cfg.dataSlice);
    const slot = contextSlot(ledger, cfg);
    return withContext(
      slot,
      keys.map((key) => {
        const account = ledger.getAccount(key, commitmentOf(cfg));
        return account && encodeAccount(ledger, account, encoding, slice);
      }),
    );
  },
  getProgramAccounts: (params, ledger) => {
    const program = pubkey(params[0]);
    const cfg = config(params, 1);
    const encoding = accountEncoding(cfg.encoding);
    const slice = dataSlice(cfg.dataSlice);
    const slot = contextSlot(ledger, cfg);
    const matches = accountFilter(cfg.filters);
    const value = ledger
      .programAccounts(program, commitmentOf(cfg))
      .filter(({ account }) => matches(account.data))
      .map(({ key, account }) => ({
        account: encodeAccount(ledger, account, encoding, slice),
        pubkey: encodeBase58(key),
      }));
    return cfg.withContext ? withContext(slot, value) : value;
  },
  getTokenAccountBalance: (params, ledger) => {
    const key = pubkey(params[0]);
    const cfg = config(params, 1);
    const slot = contextSlot(ledger, cfg);
    const account = ledger.getAccount(key, commitmentOf(cfg));
    if (!account) throw invalidParams('Invalid param: could not find account');
    if (!isTokenAccountData(account.data) || !isTokenProgram(account.owner))
      throw invalidParams('Invalid param: not a Token account');
    const parsed = encodeAccount(ledger, account, 'jsonParsed').data as {
      parsed?: { info: { tokenAmount: unknown } };
    };
    if (!parsed.parsed) throw invalidParams('Invalid param: could not find mint');
    return withContext(slot, parsed.parsed.info.tokenAmount);
  },
  getTokenSupply: (params, ledger) => {
    const key = pubkey(params[0]);
    const cfg = config(params, 1);
    const slot = contextSlot(ledger, cfg);
    const account = ledger.getAccount(key, commitmentOf(cfg));
    if (!account || !isTokenProgram(account.owner) || !isMintData(account.data)) {
      throw invalidParams('Invalid param: not a Token mint');
    }
    const { supply, decimals } = readMint(account.data);
    return withContext(slot, {
      amount: supply.toString(),
      decimals,
      uiAmount: Number(supply) / 10 ** decimals,
      uiAmountString: uiAmountString(supply, decimals),
    });
  },
  getTokenAccountsByOwner: (params, ledger) => {
    const owner = pubkey(params[0]);
    const filter = params[1] as Config | undefined;
    const cfg = config(params, 2);
    const encoding = accountEncoding(cfg.encoding);
    const slice = dataSlice(cfg.dataSlice);
    const slot = contextSlot(ledger, cfg);
    let programs: Uint8Array[];
    let mint: Uint8Array | null = null;
    if (filter && typeof filter === 'object' && filter.mint !== undefined) {
      mint = pubkey(filter.mint);
      const mintAccount = ledger.getAccount(mint, commitmentOf(cfg));
      if (!mintAccount || !isTokenProgram(mintAccount.owner))
        throw invalidParams('Invalid param: could not find mint');
      programs = [mintAccount.owner];
    } else if (filter && typeof filter === 'object' && filter.programId !== undefined) {
      programs = [tokenProgramParam(filter.programId)];
    } else {
      throw invalidParams('Invalid params: expected { mint } or { programId }');
    }
    const ownerKey = keyOf(owner);
    const mintKey = mint && keyOf(mint);
    const value = programs.flatMap((program) =>
      ledger
        .programAccounts(program, commitmentOf(cfg))
        .filter(({ account }) => {
          if (!isTokenAccountData(account.data)) return false;
          const token = readTokenAccount(account.data);
          return keyOf(token.owner) === ownerKey && (mintKey === null || keyOf(token.mint) === mintKey);
        })
        .map(({ key, account }) => ({
          account: encodeAccount(ledger, account, encoding, slice),
          pubkey: encodeBase58(key),
        })),
    );
    return withContext(slot, value);
  },
  getSignatureStatuses: (params, ledger) => {
    if (!Array.isArray(params[0])) throw invalidParams('Invalid params: expected an array of signatures');
    if (params[0].length > MAX_SIGNATURE_STATUSES)
      throw invalidParams(`Too many inputs provided; max ${MAX_SIGNATURE_STATUSES}`);
    const search = config(params, 1).searchTransactionHistory === true;
    const slot = ledger.slot();
    return withContext(
      slot,
      params[0].map((sig) => {
        // Known signatures are valid by construction; only unknown ones need the format check.
        const record = typeof sig === 'string' ? ledger.signatureStatus(sig, search) : null;
        if (!record) signature(sig);
        return (
          record && {
            ...ledger.confirmationOf(record.slot),
            err: record.err?.json ?? null,
            slot: record.slot,
            status: statusOf(record),
          }
        );
      }),
    );
  },
  getTransaction: (params, ledger) => {
    const sig = signature(params[0]);
    const cfg = typeof params[1] === 'string' ? { encoding: params[1] } : config(params, 1);
    const commitment = atLeastConfirmed(cfg);
    const encoding = transactionEncoding(cfg.encoding);
    const record = ledger.getTransaction(sig, commitment);
    if (!record) return null;
    const withVersion = cfg.maxSupportedTransactionVersion != null;
    return {
      blockTime: record.blockTime,
      slot: record.slot,
      ...encodeTransaction(record, { encoding, withVersion }),
    };
  },
  getSignaturesForAddress: (params, ledger) => {
    const address = encodeBase58(pubkey(params[0]));
    const cfg = config(params, 1);
    const commitment = atLeastConfirmed(cfg);
    const limit = integer(cfg.limit ?? MAX_SIGNATURES_FOR_ADDRESS, 'limit');
    if (limit < 1n || limit > BigInt(MAX_SIGNATURES_FOR_ADDRESS))
      throw invalidParams(`Invalid limit; max ${MAX_SIGNATURES_FOR_ADDRESS}`);
    const before = cfg.before == null ? undefined : signature(cfg.before);
    const until = cfg.until == null ? undefined : signature(cfg.until);
    contextSlot(ledger, cfg);
    const query = { limit: Number(limit), before, until };
    return ledger.signaturesForAddress(address, query, commitment).map((record) => ({
      blockTime: record.blockTime,
      confirmationStatus: ledger.confirmationOf(record.slot).confirmationStatus,
      err: record.err?.json ?? null,
      memo: memoOf(record),
      signature: record.signature,
      slot: record.slot,
    }));
  },
  getBlock: (params, ledger) => {
    const slot = slotParam(params[0]);
    const cfg = typeof params[1] === 'string' ? { encoding: params[1] } : config(params, 1);
    const commitment = atLeastConfirmed(cfg);
    const encoding = transactionEncoding(cfg.encoding);
    const details = cfg.transactionDetails ?? 'full';
    if (typeof details !== 'string' || !TRANSACTION_DETAILS.has(details))
      throw invalidParams(`Invalid param: unknown transactionDetails ${String(details)}`);
    const rewards = cfg.rewards ?? true;
    if (typeof rewards !== 'boolean') throw invalidParams('Invalid params: rewards must be a boolean');
    const withVersion = cfg.maxSupportedTransactionVersion != null;
    checkBlockAvailable(ledger, slot, commitment);
    const block = ledger.block(slot);
    const out: Record<string, unknown> = {
      blockHeight: block.slot,
      blockTime: block.blockTime,
      blockhash: block.blockhash,
      parentSlot: block.parentSlot,
      previousBlockhash: block.previousBlockhash,
    };
    if (details === 'full' || details === 'accounts') {
      out.transactions = block.transactions.map((record) =>
        encodeTransaction(record, { encoding, withVersion, details, rewards }),
      );
    }
    if (details === 'signatures') out.signatures = block.transactions.map((record) => record.signature);
    if (rewards) out.rewards = [];
    return out;
  },
  getBlockTime: (params, ledger) => {
    const slot = slotParam(params[0]);
    checkBlockAvailable(ledger, slot, 'confirmed');
    return ledger.block(slot).blockTime;
  },
  getBlocks: (params, ledger) => {
    const start = slotParam(params[0]);
    const hasEnd = typeof params[1] === 'number' || typeof params[1] === 'bigint';
    const commitment = atLeastConfirmed(config(params, hasEnd ? 2 : 1));
    const end = Math.min(hasEnd ? slotParam(params[1]) : start + MAX_BLOCK_RANGE, ledger.slot(commitment));
    if (end - start > MAX_BLOCK_RANGE) throw invalidParams(`Slot range too large; max ${MAX_BLOCK_RANGE}`);
    return slotRange(ledger, Math.max(start, ledger.firstAvailableBlock()), end);
  },
  getBlocksWithLimit: (params, ledger) => {
    const start = slotParam(params[0]);
    const limit = Number(integer(params[1], 'limit'));
    const commitment = atLeastConfirmed(config(params, 2));
    if (limit > MAX_BLOCK_RANGE) throw invalidParams(`Limit too large; max ${MAX_BLOCK_RANGE}`);
    const from = Math.max(start, ledger.firstAvailableBlock());
    return slotRange(ledger, from, Math.min(from + limit - 1, ledger.slot(commitment)));
  },
  getFirstAvailableBlock: (_params, ledger) => ledger.firstAvailableBlock(),
  minimumLedgerSlot: (_params, ledger) => ledger.firstAvailableBlock(),
  sendTransaction: (params, ledger) => {
    const cfg = config(params, 1);
    const bytes = decodeTransactionParam(params[0], cfg);
    contextSlot(ledger, cfg);
    try {
      return sendResult(ledger.submit(bytes, { preflight: cfg.skipPreflight !== true }));
    } catch (error) {
      return wireError(error);
    }
  },
  simulateTransaction: (params, ledger) => {
    const cfg = config(params, 1);
    const bytes = decodeTransactionParam(params[0], cfg);
    const slot = contextSlot(ledger, cfg);
    const sigVerify = cfg.sigVerify === true;
    const replaceRecentBlockhash = cfg.replaceRecentBlockhash === true;
    if (sigVerify && replaceRecentBlockhash)
      throw invalidParams('sigVerify may not be used with replaceRecentBlockhash');
    let outcome: ReturnType<Ledger['simulate']>;
    try {
      outcome = ledger.simulate(bytes, {
        sigVerify,
        replaceRecentBlockhash,
        innerInstructions: cfg.innerInstructions === true,
      });
    } catch (error) {
      return wireError(error);
    }
    if (sigVerify && outcome.err?.json === 'SignatureFailure')
      throw new RpcError(-32003, 'Transaction signature verification failure');
    let accounts: unknown = null;
    const accountsCfg = cfg.accounts as Config | undefined;
    if (accountsCfg && Array.isArray(accountsCfg.addresses)) {
      const encoding = accountEncoding(accountsCfg.encoding ?? 'base64');
      accounts = accountsCfg.addresses.map((address) => {
        const key = pubkey(address);
        const post = outcome.postAccounts.has(keyOf(key))
          ? outcome.postAccounts.get(keyOf(key))
          : ledger.getAccount(key);
        return post ? encodeAccount(ledger, post, encoding) : null;
      });
    }
    return withContext(slot, {
      accounts,
      err: outcome.err?.json ?? null,
      fee: u64(outcome.fee),
      innerInstructions: outcome.innerInstructions && encodeInnerInstructions(outcome.innerInstructions),
      loadedAccountsDataSize: null,
      loadedAddresses: {
        readonly: outcome.loadedAddresses.readonly.map(encodeBase58),
        writable: outcome.loadedAddresses.writable.map(encodeBase58),
      },
      logs: outcome.logs,
      postBalances: null,
      postTokenBalances: null,
      preBalances: null,
      preTokenBalances: null,
      replacementBlockhash: outcome.replacementBlockhash,
      returnData: outcome.returnData && {
        data: [Buffer.from(outcome.returnData.data).toString('base64'), 'base64'],
        programId: encodeBase58(outcome.returnData.programId),
      },
      unitsConsumed: u64(outcome.unitsConsumed),
    });
  },
  requestAirdrop: (params, ledger) => {
    const key = pubkey(params[0]);
    const lamports = integer(params[1], 'lamports');
    contextSlot(ledger, config(params, 2));
    return cheat(() => {
      const outcome = ledger.airdrop(key, lamports);
      if (outcome.kind !== 'landed') throw new RpcError(-32603, `airdrop failed: ${outcome.kind}`);
      return outcome.signature;
    });
  },
  surfnet_setAccount: async (params, ledger) => {
    const key = pubkey(params[0]);
    const update = (params[1] ?? {}) as Config;
    if (typeof update !== 'object') throw invalidParams('Invalid params: expected an account update object');
    const patch: AccountPatch = {};
    if (update.lamports !== undefined) patch.lamports = integer(update.lamports, 'lamports');
    if (update.owner !== undefined) patch.owner = pubkey(update.owner);
    if (update.data !== undefined) patch.data = hexBytes(update.data);
    if (update.executable !== undefined) patch.executable = update.executable === true;
    const rentEpoch = update.rentEpoch ?? update.rent_epoch;
    if (rentEpoch !== undefined) patch.rentEpoch = integer(rentEpoch, 'rentEpoch');
    await cheat(() => ledger.setAccount(key, patch));
    return withContext(ledger.slot(), null);
  },
  surfnet_setTokenAccount: async (params, ledger) => {
    const owner = pubkey(params[0]);
    const mint = pubkey(params[1]);
    const update = (params[2] ?? {}) as Config;
    const tokenProgram = tokenProgramParam(params[3]);
    const patch: TokenAccountPatch = {};
    if (update.amount !== undefined) patch.amount = integer(update.amount, 'amount');
    if (update.delegate !== undefined) patch.delegate = optionalKey(update.delegate);
    if (update.state !== undefined) {
      if (update.state !== 'initialized' && update.state !== 'frozen' && update.state !== 'uninitialized') {
        throw invalidParams(`Invalid param: unknown token account state ${String(update.state)}`);
      }
      patch.state = update.state;
    }
    const delegated = update.delegatedAmount ?? update.delegated_amount;
    if (delegated !== undefined) patch.delegatedAmount = integer(delegated, 'delegatedAmount');
    const close = update.closeAuthority ?? update.close_authority;
    if (close !== undefined) patch.closeAuthority = optionalKey(close);
    await cheat(() => ledger.setTokenAccount(owner, mint, patch, tokenProgram));
    return withContext(ledger.slot(), null);
  },
  /** This chain's own: what the mainnet profile's block production did (null on an instant chain). */
  localchain_clusterStats: (_params, ledger) => ledger.clusterStats(),
  surfnet_timeTravel: (params, ledger) =>
    cheat(() => ledger.timeTravel(timeTravelTarget(params[0], ledger.chainTimeMs()))),
};

function isTokenProgram(owner: Uint8Array): boolean {
  const text = encodeBase58(owner);
  return text === TOKEN_PROGRAM || text === TOKEN_2022_PROGRAM;
}
