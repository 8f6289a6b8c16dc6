// The local chain: a LiteSVM runtime made to behave like a validator. Slots advance with (injected)
// wall time and move the Clock sysvar; every slot has its own blockhash, valid for 150 slots;
// transactions are checked against that window and a status cache, executed, and recorded with
// status, logs, balances and slot. Everything here is synchronous and single-threaded, so one
// request is one atomic step of the chain.
//
// It drives LiteSVM's native binding (`litesvm/dist/internal.js`) rather than the kit-typed
// wrapper: the endpoint receives raw wire bytes and the binding takes them as they are, where the
// wrapper would decode and re-encode every transaction through @solana/kit.
import { createPrivateKey, createPublicKey, randomBytes, sign } from 'node:crypto';
import type { Address } from '@solana/kit';
import { findAssociatedTokenPda } from '@solana-program/token';
import {
  Account,
  EpochSchedule,
  FailedTransactionMetadata,
  LiteSvm,
  Clock as SvmClock,
  type TransactionMetadata,
} from 'litesvm/dist/internal.js';
import type { Clock } from '../../domain/clock.ts';
import { decodeBase58Exact, encodeBase58 } from '../base58.ts';
import { keyOf, keyOfAddress } from '../keys.ts';
import {
  isMintData,
  isTokenAccountData,
  isTokenProgramBytes,
  isTokenProgramKey,
  readTokenAccount,
  readU64,
  TOKEN_ACCOUNT_SIZE,
  type TokenAccountFields,
  writeTokenAccount,
} from '../spl.ts';
import { computeFee } from './fees.ts';
import { type DescribedError, describeFailure, namedTransactionError } from './tx-error.ts';
import { isStaticKeyWritable, parseWireTransaction, type WireMessage, type WireTransaction } from './wire.ts';

/** Slots a blockhash stays usable, as on every cluster (MAX_PROCESSING_AGE). */
export const BLOCKHASH_VALID_SLOTS = 150;
/** Slots the status cache remembers signatures for (MAX_CACHE_ENTRIES). */
export const STATUS_CACHE_SLOTS = 300;
/** Slots per epoch (no warm-up, as on mainnet). */
export const SLOTS_PER_EPOCH = 432_000;

const SYSTEM_PROGRAM = '11111111111111111111111111111111';
const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';
const SYSTEM_PROGRAM_KEY = keyOfAddress(SYSTEM_PROGRAM);
const ALT_PROGRAM_KEY = keyOfAddress('AddressLookupTab1e1111111111111111111111111');
const ALT_META_SIZE = 56;
const FAUCET_LAMPORTS = 1_000_000_000n * 1_000_000_000n;
const FAUCET_REFILL_BELOW = FAUCET_LAMPORTS / 10n;
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const U64_MAX = 18_446_744_073_709_551_615n;

/** A program to deploy through the upgradeable loader when the chain starts. */
export interface ProgramDeployment {
  /** Base58 program id. */
  programId: string;
  /** The program's ELF (.so) bytes. */
  elf: Uint8Array;
  /** Base58 upgrade authority written into the ProgramData account; none (immutable) if omitted. */
  upgradeAuthority?: string | null;
}

/** An account as stored. */
export interface LedgerAccount {
  lamports: bigint;
  owner: Uint8Array;
  data: Uint8Array;
  executable: boolean;
  rentEpoch: bigint;
}

/** A token balance entry of a recorded transaction (pre or post). */
export interface TokenBalanceRecord {
  accountIndex: number;
  mint: Uint8Array;
  owner: Uint8Array;
  programId: Uint8Array;
  amount: bigint;
  decimals: number;
}

/** One inner (CPI) instruction, compiled against the transaction's account keys. */
export interface InnerInstructionRecord {
  programIdIndex: number;
  accounts: Uint8Array;
  data: Uint8Array;
  stackHeight: number;
}

/** Everything the chain remembers about a landed transaction. */
export interface TxRecord {
  seq: number;
  signature: string;
  slot: number;
  blockTime: number;
  wire: Uint8Array;
  err: DescribedError | null;
  logs: string[];
  fee: bigint;
  unitsConsumed: bigint;
  loadedWritable: Uint8Array[];
  loadedReadonly: Uint8Array[];
  preBalances: bigint[];
  postBalances: bigint[];
  preTokenBalances: TokenBalanceRecord[];
  postTokenBalances: TokenBalanceRecord[];
  innerInstructions: { index: number; instructions: InnerInstructionRecord[] }[];
  returnData: { programId: Uint8Array; data: Uint8Array } | null;
}

/** What happened to a submitted transaction. */
export type SubmitOutcome =
  | { kind: 'landed'; signature: string; record: TxRecord }
  /** Preflight refused it; nothing changed on chain. */
  | { kind: 'rejected'; signature: string; error: DescribedError; logs: string[]; unitsConsumed: bigint }
  /** Sent without preflight and never included (bad blockhash, duplicate, unpayable fee). */
  | { kind: 'dropped'; signature: string; error: DescribedError }
  /** Signatures do not verify (reported only with preflight, as validators do). */
  | { kind: 'signature-failure'; signature: string }
  /** The message fails sanitization. */
  | { kind: 'invalid'; signature: string; error: DescribedError };

/** Result of a simulation. */
export interface SimulationOutcome {
  err: DescribedError | null;
  logs: string[];
  unitsConsumed: bigint;
  fee: bigint;
  returnData: { programId: Uint8Array; data: Uint8Array } | null;
  innerInstructions: { index: number; instructions: InnerInstructionRecord[] }[] | null;
  replacementBlockhash: { blockhash: string; lastValidBlockHeight: number } | null;
  postAccounts: Map<string, LedgerAccount | null>;
  loadedAddresses: { writable: Uint8Array[]; readonly: Uint8Array[] };
}

/** Fields a cheat code may overwrite on an account. */
export interface AccountPatch {
  lamports?: bigint;
  owner?: Uint8Array;
  data?: Uint8Array;
  executable?: boolean;
  rentEpoch?: bigint;
}

/** Fields `surfnet_setTokenAccount` may overwrite on a token account. */
export interface TokenAccountPatch {
  amount?: bigint;
  delegate?: Uint8Array | null;
  state?: 'uninitialized' | 'initialized' | 'frozen';
  delegatedAmount?: bigint;
  closeAuthority?: Uint8Array | null;
}

/** Where `timeTravel` goes; exactly one field. */
export interface TimeTravelTarget {
  absoluteTimestamp?: number;
  absoluteSlot?: number;
  absoluteEpoch?: number;
}

/** Numbers of getEpochInfo. */
export interface EpochInfo {
  absoluteSlot: number;
  blockHeight: number;
  epoch: number;
  slotIndex: number;
  slotsInEpoch: number;
  transactionCount: number;
}

/** The metadata saved beside LiteSVM's own snapshot. */
export interface LedgerMeta {
  version: 1;
  genesisHash: string;
  faucetSeed: string;
  slot: number;
  chainTimeMs: number;
  seq: number;
  transactionCount: number;
  airdropCount: number;
  blockhashes: [string, number][];
}

/** State to resume from (see persistence.ts). */
export interface RestoredLedger {
  svmBytes: Uint8Array;
  meta: LedgerMeta;
  records: TxRecord[];
}

/** Configuration of a ledger. */
export interface LedgerOptions {
  clock: Clock;
  slotMs?: number;
  programs?: readonly ProgramDeployment[];
  restored?: RestoredLedger;
  /** Oldest transactions are forgotten beyond this many (default 50,000). */
  maxRecordedTransactions?: number;
}

/** Raised by cheat codes and time travel on bad input. */
export class LedgerInputError extends Error {
  override name = 'LedgerInputError';
}

interface BlockhashEntry {
  blockhash: string;
  slot: number;
}

/** The local chain state machine. */
export type Ledger = ReturnType<typeof createLedger>;

/** Creates a ledger, fresh or resumed from saved state. */
export function createLedger(options: LedgerOptions) {
  const { clock } = options;
  const slotMs = options.slotMs ?? 400;
  const maxRecords = options.maxRecordedTransactions ?? 50_000;
  const restored = options.restored;

  const svm = restored ? LiteSvm.fromBytes(restored.svmBytes) : new LiteSvm();
  // Blockhash age and duplicate signatures are checked here, against a per-slot window and a
  // status cache, instead of LiteSVM's single "latest blockhash".
  svm.setBlockhashCheck(false);
  svm.setTransactionHistory(0n);
  svm.setSigverify(true);

  const genesisHash = restored?.meta.genesisHash ?? encodeBase58(randomBytes(32));
  const faucetSeed = restored ? Buffer.from(restored.meta.faucetSeed, 'hex') : randomBytes(32);
  const faucetKey = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, faucetSeed]),
    format: 'der',
    type: 'pkcs8',
  });
  const faucetPublic = new Uint8Array(
    createPublicKey(faucetKey).export({ format: 'der', type: 'spki' }).subarray(-32),
  );

  let slot = restored?.meta.slot ?? 0;
  let seq = restored?.meta.seq ?? 0;
  let transactionCount = restored?.meta.transactionCount ?? 0;
  let airdropCount = restored?.meta.airdropCount ?? 0;
  // Chain time runs at wall-clock speed plus an offset that only time travel grows; it never
  // goes back, even across restarts.
  let offsetMs = restored ? Math.max(0, restored.meta.chainTimeMs - clock.now().getTime()) : 0;
  const anchorSlot = slot;
  const anchorMs = clock.now().getTime() + offsetMs;

  const blockhashes = new Map<string, BlockhashEntry>(); // key: raw-bytes key of the hash
  let latest: BlockhashEntry = { blockhash: '', slot };
  const records = new Map<string, TxRecord>();
  let pending: TxRecord[] = [];
  let dirty = !restored;
  const mintDecimals = new Map<string, number>();
  const slotListeners = new Set<(slot: number) => void>();
  const txListeners = new Set<(record: TxRecord, writableKeys: Uint8Array[]) => void>();

  function addBlockhash(blockhash: string, at: number) {
    const bytes = decodeBase58Exact(blockhash, 32);
    if (!bytes) throw new Error(`LiteSVM produced a malformed blockhash ${blockhash}`);
    latest = { blockhash, slot: at };
    blockhashes.set(keyOf(bytes), latest);
  }

  function unixSecondsAt(s: number): number {
    return Math.floor((anchorMs + (s - anchorSlot) * slotMs) / 1000);
  }

  function writeClockSysvar() {
    const epoch = Math.floor(slot / SLOTS_PER_EPOCH);
    const epochStart = unixSecondsAt(epoch * SLOTS_PER_EPOCH);
    svm.setClock(
      new SvmClock(
        BigInt(slot),
        BigInt(epochStart),
        BigInt(epoch),
        BigInt(epoch + 1),
        BigInt(unixSecondsAt(slot)),
      ),
    );
  }

  function advanceTo(target: number) {
    // Only the last 151 slots' blockhashes can still be used, so a long jump mints just those.
    for (let s = Math.max(slot + 1, target - BLOCKHASH_VALID_SLOTS); s <= target; s++) {
      svm.expireBlockhash();
      addBlockhash(svm.latestBlockhash(), s);
    }
    for (const [key, entry] of blockhashes) {
      if (entry.slot >= target - STATUS_CACHE_SLOTS) break;
      blockhashes.delete(key);
    }
    slot = target;
    writeClockSysvar();
    dirty = true;
    for (const listener of slotListeners) listener(slot);
  }

  function chainNowMs(): number {
    return clock.now().getTime() + offsetMs;
  }

  /** Produces the slots that wall time says are due. */
  function sync() {
    const target = anchorSlot + Math.floor((chainNowMs() - anchorMs) / slotMs);
    if (target > slot) advanceTo(target);
  }

  // Genesis or resume.
  if (restored) {
    for (const [blockhash, at] of restored.meta.blockhashes) addBlockhash(blockhash, at);
    for (const record of restored.records) records.set(record.signature, record);
  } else {
    svm.setEpochSchedule(new EpochSchedule(BigInt(SLOTS_PER_EPOCH), BigInt(SLOTS_PER_EPOCH), false, 0n, 0n));
    svm.withNativeMints();
    writeClockSysvar();
    addBlockhash(svm.latestBlockhash(), slot);
  }
  writeClockSysvar();
  fundFaucet();
  for (const program of options.programs ?? []) deployProgram(program);

  function fundFaucet() {
    const balance = svm.getBalance(faucetPublic) ?? 0n;
    if (balance < FAUCET_REFILL_BELOW) {
      svm.setAccount(
        faucetPublic,
        new Account(FAUCET_LAMPORTS, new Uint8Array(0), addressKeyBytes(SYSTEM_PROGRAM), false, U64_MAX),
      );
    }
  }

  function deployProgram(program: ProgramDeployment) {
    const id = addressKeyBytes(program.programId);
    svm.addProgram(id, program.elf);
    if (program.upgradeAuthority) {
      // LiteSVM writes ProgramData with no authority; put the requested one at its offset
      // (u32 tag, u64 slot, Option<Pubkey>).
      const programAccount = svm.getAccount(id);
      const programData = programAccount && svm.getAccount(programAccount.data().subarray(4, 36));
      if (!programAccount || !programData) throw new Error(`program ${program.programId} did not deploy`);
      const data = programData.data();
      data[12] = 1;
      data.set(addressKeyBytes(program.upgradeAuthority), 13);
      svm.setAccount(
        programAccount.data().subarray(4, 36),
        new Account(programData.lamports(), data, programData.owner(), false, programData.rentEpoch()),
      );
    }
    dirty = true;
  }

  function readAccount(key: Uint8Array): LedgerAccount | null {
    const account = svm.getAccount(key);
    if (!account) return null;
    const lamports = account.lamports();
    if (lamports === 0n) return null;
    return {
      lamports,
      owner: account.owner(),
      data: account.data(),
      executable: account.executable(),
      rentEpoch: account.rentEpoch(),
    };
  }

  function decimalsOf(mint: Uint8Array): number {
    const key = keyOf(mint);
    let decimals = mintDecimals.get(key);
    if (decimals === undefined) {
      const account = svm.getAccount(mint);
      const data = account?.data();
      decimals = data && isMintData(data) ? (data[44] as number) : 0;
      mintDecimals.set(key, decimals);
    }
    return decimals;
  }

  function resolveLookups(message: WireMessage): { writable: Uint8Array[]; readonly: Uint8Array[] } | null {
    const writable: Uint8Array[] = [];
    const readonly: Uint8Array[] = [];
    for (const lookup of message.lookups) {
      const table = svm.getAccount(lookup.table);
      if (!table || keyOf(table.owner()) !== ALT_PROGRAM_KEY) return null;
      const data = table.data();
      const count = (data.length - ALT_META_SIZE) / 32;
      const pick = (indexes: Uint8Array, into: Uint8Array[]) => {
        for (const index of indexes) {
          if (index >= count) return false;
          into.push(data.subarray(ALT_META_SIZE + index * 32, ALT_META_SIZE + index * 32 + 32));
        }
        return true;
      };
      if (!pick(lookup.writableIndexes, writable) || !pick(lookup.readonlyIndexes, readonly)) return null;
    }
    return { writable, readonly };
  }

  interface Snapshot {
    balances: bigint[];
    tokens: TokenBalanceRecord[];
  }

  interface ScanPlan {
    invoked: Uint8Array;
    writable: Uint8Array;
    tokens: boolean;
  }

  function scanPlan(message: WireMessage, keys: Uint8Array[], loadedWritable: number): ScanPlan {
    const invoked = new Uint8Array(keys.length);
    for (const ix of message.instructions)
      if (ix.programIdIndex < keys.length) invoked[ix.programIdIndex] = 1;
    const writable = new Uint8Array(keys.length);
    const staticCount = message.staticKeys.length;
    for (let i = 0; i < staticCount; i++) if (isStaticKeyWritable(message, i)) writable[i] = 1;
    for (let i = 0; i < loadedWritable; i++) writable[staticCount + i] = 1;
    let tokens = false;
    for (const key of keys) {
      if (isTokenProgramBytes(key)) {
        tokens = true;
        break;
      }
    }
    return { invoked, writable, tokens };
  }

  // Balances of every key, and token balances of every key that is not an invoked program (the
  // rule validators apply; they skip the token scan when no token program is in the keys). After
  // execution only writable keys are read again: read-only ones cannot have changed.
  function snapshotBalances(keys: Uint8Array[], scan: ScanPlan, before?: Snapshot): Snapshot {
    const balances: bigint[] = new Array(keys.length);
    const tokens: TokenBalanceRecord[] = [];
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as Uint8Array;
      if (before && !scan.writable[i]) {
        balances[i] = before.balances[i] as bigint;
        continue;
      }
      if (!scan.tokens || scan.invoked[i]) {
        balances[i] = svm.getBalance(key) ?? 0n;
        continue;
      }
      const account = svm.getAccount(key);
      if (!account) {
        balances[i] = 0n;
        continue;
      }
      balances[i] = account.lamports();
      const owner = account.owner();
      if (!isTokenProgramKey(keyOf(owner))) continue;
      const data = account.data();
      if (!isTokenAccountData(data)) continue;
      const mint = data.subarray(0, 32);
      tokens.push({
        accountIndex: i,
        mint,
        owner: data.subarray(32, 64),
        programId: owner,
        amount: readU64(data, 64),
        decimals: decimalsOf(mint),
      });
    }
    if (before && scan.tokens) {
      // Read-only token accounts keep their entry from before.
      for (const entry of before.tokens) if (!scan.writable[entry.accountIndex]) tokens.push(entry);
      tokens.sort((a, b) => a.accountIndex - b.accountIndex);
    }
    return { balances, tokens };
  }

  function innerInstructionsOf(meta: TransactionMetadata) {
    const out: { index: number; instructions: InnerInstructionRecord[] }[] = [];
    const sets = meta.innerInstructions();
    for (let index = 0; index < sets.length; index++) {
      const set = sets[index] as ReturnType<TransactionMetadata['innerInstructions']>[number];
      if (set.length === 0) continue;
      out.push({
        index,
        instructions: set.map((inner) => {
          const ix = inner.instruction();
          return {
            programIdIndex: ix.programIdIndex(),
            accounts: ix.accounts(),
            data: ix.data(),
            stackHeight: inner.stackHeight(),
          };
        }),
      });
    }
    return out;
  }

  // Asking the binding for return data costs more than the rest of the metadata together, and the
  // runtime logs "Program return: ..." whenever a program sets some: look only then.
  function returnDataOf(meta: TransactionMetadata, logs: string[]) {
    if (!logs.some((line) => line.startsWith('Program return: '))) return null;
    const returned = meta.returnData();
    const data = returned.data();
    return data.length === 0 ? null : { programId: returned.programId(), data };
  }

  function isNonceTransaction(tx: WireTransaction): boolean {
    const first = tx.message.instructions[0];
    if (!first) return false;
    const program = tx.message.staticKeys[first.programIdIndex];
    // SystemInstruction::AdvanceNonceAccount is variant 4.
    return (
      program !== undefined &&
      keyOf(program) === SYSTEM_PROGRAM_KEY &&
      first.data.length === 4 &&
      first.data[0] === 4
    );
  }

  function blockhashSlot(tx: WireTransaction): number | undefined {
    const entry = blockhashes.get(keyOf(tx.message.recentBlockhash));
    return entry && slot - entry.slot <= BLOCKHASH_VALID_SLOTS ? entry.slot : undefined;
  }

  // Executes with LiteSVM; a durable-nonce transaction (blockhash outside the window) is checked
  // by LiteSVM's own nonce logic, switched on for just that call.
  function execute(tx: WireTransaction, viaNonce: boolean) {
    if (!viaNonce) return svm.sendVersionedTransaction(tx.bytes);
    svm.setBlockhashCheck(true);
    try {
      return svm.sendVersionedTransaction(tx.bytes);
    } finally {
      svm.setBlockhashCheck(false);
    }
  }

  function allKeys(message: WireMessage, loaded: { writable: Uint8Array[]; readonly: Uint8Array[] } | null) {
    if (!loaded || (loaded.writable.length === 0 && loaded.readonly.length === 0)) return message.staticKeys;
    return [...message.staticKeys, ...loaded.writable, ...loaded.readonly];
  }

  // Forgets the oldest records beyond the cap, but never one the status cache still needs to
  // refuse a duplicate.
  function remember(record: TxRecord) {
    records.set(record.signature, record);
    pending.push(record);
    while (records.size > maxRecords) {
      const oldest = records.values().next().value;
      if (!oldest || slot - oldest.slot <= STATUS_CACHE_SLOTS) break;
      records.delete(oldest.signature);
    }
  }

  /** Checks, executes and records a serialized transaction. Throws WireFormatError on bad bytes. */
  function submit(bytes: Uint8Array, opts: { preflight: boolean }): SubmitOutcome {
    sync();
    const tx = parseWireTransaction(bytes);
    const firstSignature = tx.signatures[0];
    const signature = firstSignature
      ? encodeBase58(firstSignature)
      : '1111111111111111111111111111111111111111111111111111111111111111';
    const message = tx.message;
    if (!firstSignature || message.numRequiredSignatures === 0) {
      return { kind: 'invalid', signature, error: namedTransactionError('SanitizeFailure') };
    }
    const hashSlot = blockhashSlot(tx);
    const viaNonce = hashSlot === undefined && isNonceTransaction(tx);
    if (hashSlot === undefined && !viaNonce) {
      const error = namedTransactionError('BlockhashNotFound');
      return opts.preflight
        ? { kind: 'rejected', signature, error, logs: [], unitsConsumed: 0n }
        : { kind: 'dropped', signature, error };
    }
    const known = records.get(signature);
    if (known && (viaNonce || slot - known.slot <= STATUS_CACHE_SLOTS)) {
      const error = namedTransactionError('AlreadyProcessed');
      return opts.preflight
        ? { kind: 'rejected', signature, error, logs: [], unitsConsumed: 0n }
        : { kind: 'dropped', signature, error };
    }

    const loaded = message.lookups.length > 0 ? resolveLookups(message) : null;
    const keys = allKeys(message, loaded);
    const plan = scanPlan(message, keys, loaded ? loaded.writable.length : 0);
    const pre = snapshotBalances(keys, plan);
    const result = execute(tx, viaNonce);
    if (result instanceof FailedTransactionMetadata) {
      const meta = result.meta();
      const payerAfter = svm.getBalance(keys[0] as Uint8Array) ?? 0n;
      const payerBefore = pre.balances[0] as bigint;
      const error = describeFailure(result);
      // A failure that charged no fee never made it into a block.
      const charged = payerAfter < payerBefore;
      if (!charged) {
        if (error.json === 'SanitizeFailure') return { kind: 'invalid', signature, error };
        if (error.json === 'SignatureFailure') {
          return opts.preflight
            ? { kind: 'signature-failure', signature }
            : { kind: 'dropped', signature, error };
        }
        return opts.preflight
          ? {
              kind: 'rejected',
              signature,
              error,
              logs: meta.logs(),
              unitsConsumed: meta.computeUnitsConsumed(),
            }
          : { kind: 'dropped', signature, error };
      }
      if (opts.preflight) {
        // Preflight would have stopped it before any fee was taken: give the fee back.
        const payer = svm.getAccount(keys[0] as Uint8Array);
        if (payer) {
          svm.setAccount(
            keys[0] as Uint8Array,
            new Account(payerBefore, payer.data(), payer.owner(), payer.executable(), payer.rentEpoch()),
          );
        }
        return {
          kind: 'rejected',
          signature,
          error,
          logs: meta.logs(),
          unitsConsumed: meta.computeUnitsConsumed(),
        };
      }
      return {
        kind: 'landed',
        signature,
        record: record(tx, signature, keys, plan, loaded, pre, meta, error),
      };
    }
    return {
      kind: 'landed',
      signature,
      record: record(tx, signature, keys, plan, loaded, pre, result, null),
    };
  }

  function record(
    tx: WireTransaction,
    signature: string,
    keys: Uint8Array[],
    plan: ScanPlan,
    loaded: { writable: Uint8Array[]; readonly: Uint8Array[] } | null,
    pre: Snapshot,
    meta: TransactionMetadata,
    err: DescribedError | null,
  ): TxRecord {
    const post = snapshotBalances(keys, plan, pre);
    const keyIndex = (index: number) => {
      const key = keys[index];
      return key ? keyOf(key) : undefined;
    };
    const logs = meta.logs();
    const rec: TxRecord = {
      seq: ++seq,
      signature,
      slot,
      blockTime: unixSecondsAt(slot),
      wire: tx.bytes.slice(),
      err,
      logs,
      fee: computeFee(tx.message, keyIndex),
      unitsConsumed: meta.computeUnitsConsumed(),
      loadedWritable: loaded ? loaded.writable.map((k) => k.slice()) : [],
      loadedReadonly: loaded ? loaded.readonly.map((k) => k.slice()) : [],
      preBalances: pre.balances,
      postBalances: post.balances,
      preTokenBalances: pre.tokens,
      postTokenBalances: post.tokens,
      innerInstructions: innerInstructionsOf(meta),
      returnData: returnDataOf(meta, logs),
    };
    transactionCount++;
    remember(rec);
    dirty = true;
    if (txListeners.size > 0) {
      const writable = keys.filter((_, i) => plan.writable[i] === 1);
      for (const listener of txListeners) listener(rec, writable);
    }
    return rec;
  }

  /** Runs a transaction without committing it. Throws WireFormatError on bad bytes. */
  function simulate(
    bytes: Uint8Array,
    opts: { sigVerify: boolean; replaceRecentBlockhash: boolean; innerInstructions: boolean },
  ): SimulationOutcome {
    sync();
    let tx = parseWireTransaction(bytes);
    let replacementBlockhash: SimulationOutcome['replacementBlockhash'] = null;
    if (opts.replaceRecentBlockhash) {
      const copy = tx.bytes.slice();
      const at = tx.message.recentBlockhash.byteOffset - tx.bytes.byteOffset;
      copy.set(decodeBase58Exact(latest.blockhash, 32) as Uint8Array, at);
      tx = parseWireTransaction(copy);
      replacementBlockhash = {
        blockhash: latest.blockhash,
        lastValidBlockHeight: latest.slot + BLOCKHASH_VALID_SLOTS,
      };
    }
    const loaded = tx.message.lookups.length > 0 ? resolveLookups(tx.message) : null;
    const keys = allKeys(tx.message, loaded);
    const fee = computeFee(tx.message, (i) => {
      const key = keys[i];
      return key ? keyOf(key) : undefined;
    });
    const base = {
      fee,
      replacementBlockhash,
      loadedAddresses: { writable: loaded?.writable ?? [], readonly: loaded?.readonly ?? [] },
    };
    const viaNonce = !replacementBlockhash && blockhashSlot(tx) === undefined && isNonceTransaction(tx);
    if (!replacementBlockhash && blockhashSlot(tx) === undefined && !viaNonce) {
      return {
        ...base,
        err: namedTransactionError('BlockhashNotFound'),
        logs: [],
        unitsConsumed: 0n,
        returnData: null,
        innerInstructions: null,
        postAccounts: new Map(),
      };
    }
    if (!opts.sigVerify) svm.setSigverify(false);
    if (viaNonce) svm.setBlockhashCheck(true);
    let result: ReturnType<LiteSvm['simulateVersionedTransaction']>;
    try {
      result = svm.simulateVersionedTransaction(tx.bytes);
    } finally {
      svm.setSigverify(true);
      svm.setBlockhashCheck(false);
    }
    if (result instanceof FailedTransactionMetadata) {
      const meta = result.meta();
      const logs = meta.logs();
      return {
        ...base,
        err: describeFailure(result),
        logs,
        unitsConsumed: meta.computeUnitsConsumed(),
        returnData: returnDataOf(meta, logs),
        innerInstructions: opts.innerInstructions ? innerInstructionsOf(meta) : null,
        postAccounts: new Map(),
      };
    }
    const meta = result.meta();
    const postAccounts = new Map<string, LedgerAccount | null>();
    for (const entry of result.postAccounts()) {
      const account = entry.account();
      const lamports = account.lamports();
      postAccounts.set(
        keyOf(entry.address),
        lamports === 0n
          ? null
          : {
              lamports,
              owner: account.owner(),
              data: account.data(),
              executable: account.executable(),
              rentEpoch: account.rentEpoch(),
            },
      );
    }
    const logs = meta.logs();
    return {
      ...base,
      err: null,
      logs,
      unitsConsumed: meta.computeUnitsConsumed(),
      returnData: returnDataOf(meta, logs),
      innerInstructions: opts.innerInstructions ? innerInstructionsOf(meta) : null,
      postAccounts,
    };
  }

  // The faucet signs with node:crypto (synchronous) so an airdrop is one atomic step; a memo
  // with a running number keeps two identical requests in one slot from sharing a signature.
  function airdropTransaction(to: Uint8Array, lamports: bigint): Uint8Array {
    airdropCount++;
    const memo = Buffer.from(`airdrop ${airdropCount}`);
    const system = addressKeyBytes(SYSTEM_PROGRAM);
    const memoProgram = addressKeyBytes(MEMO_PROGRAM);
    const transfer = new Uint8Array(12);
    new DataView(transfer.buffer).setUint32(0, 2, true);
    new DataView(transfer.buffer).setBigUint64(4, lamports, true);
    const message = Buffer.concat([
      Uint8Array.of(1, 0, 2, 4), // header (1 signer, 0 readonly signed, 2 readonly unsigned), 4 keys
      faucetPublic,
      to,
      system,
      memoProgram,
      decodeBase58Exact(latest.blockhash, 32) as Uint8Array,
      Uint8Array.of(2), // 2 instructions
      Uint8Array.of(2, 2, 0, 1, transfer.length),
      transfer,
      Uint8Array.of(3, 0, memo.length),
      memo,
    ]);
    const signature = sign(null, message, faucetKey);
    return Buffer.concat([Uint8Array.of(1), signature, message]);
  }

  /** Sends lamports from the faucet; returns the transaction's signature. */
  function airdrop(to: Uint8Array, lamports: bigint): SubmitOutcome {
    if (lamports <= 0n || lamports > FAUCET_REFILL_BELOW)
      throw new LedgerInputError('airdrop amount out of range');
    if (to.length !== 32 || keyOf(to) === keyOf(faucetPublic))
      throw new LedgerInputError('invalid airdrop recipient');
    sync();
    fundFaucet();
    return submit(airdropTransaction(to, lamports), { preflight: true });
  }

  function addressKeyBytes(address: string): Uint8Array {
    const bytes = decodeBase58Exact(address, 32);
    if (!bytes) throw new LedgerInputError(`Invalid param: ${address} is not a valid address`);
    return bytes;
  }

  /** Creates or overwrites an account (cheat code). */
  function setAccount(key: Uint8Array, patch: AccountPatch) {
    sync();
    const current = readAccount(key);
    const owner = patch.owner ?? current?.owner ?? addressKeyBytes(SYSTEM_PROGRAM);
    svm.setAccount(
      key,
      new Account(
        patch.lamports ?? current?.lamports ?? 0n,
        patch.data ?? current?.data ?? new Uint8Array(0),
        owner,
        patch.executable ?? current?.executable ?? false,
        patch.rentEpoch ?? current?.rentEpoch ?? U64_MAX,
      ),
    );
    mintDecimals.delete(keyOf(key));
    dirty = true;
  }

  /** Creates or updates `owner`'s associated token account for an existing `mint` (cheat code). */
  async function setTokenAccount(
    owner: Uint8Array,
    mint: Uint8Array,
    patch: TokenAccountPatch,
    tokenProgram: Uint8Array,
  ): Promise<Uint8Array> {
    const [ataAddress] = await findAssociatedTokenPda({
      owner: encodeBase58(owner) as Address,
      mint: encodeBase58(mint) as Address,
      tokenProgram: encodeBase58(tokenProgram) as Address,
    });
    const ata = addressKeyBytes(ataAddress);
    sync();
    const mintAccount = readAccount(mint);
    if (!mintAccount || !isTokenProgramKey(keyOf(mintAccount.owner)) || !isMintData(mintAccount.data)) {
      throw new LedgerInputError('Invalid param: the mint does not exist or is not a mint');
    }
    if (keyOf(mintAccount.owner) !== keyOf(tokenProgram)) {
      throw new LedgerInputError('Invalid param: the mint is owned by a different token program');
    }
    const existing = readAccount(ata);
    const base: TokenAccountFields =
      existing && isTokenAccountData(existing.data)
        ? readTokenAccount(existing.data)
        : {
            mint,
            owner,
            amount: 0n,
            delegate: null,
            state: 'initialized',
            isNative: null,
            delegatedAmount: 0n,
            closeAuthority: null,
          };
    const fields: TokenAccountFields = {
      ...base,
      amount: patch.amount ?? base.amount,
      delegate: patch.delegate !== undefined ? patch.delegate : base.delegate,
      state: patch.state ?? base.state,
      delegatedAmount: patch.delegatedAmount ?? base.delegatedAmount,
      closeAuthority: patch.closeAuthority !== undefined ? patch.closeAuthority : base.closeAuthority,
    };
    const data = writeTokenAccount(fields);
    const tail =
      existing && existing.data.length > TOKEN_ACCOUNT_SIZE
        ? existing.data.subarray(TOKEN_ACCOUNT_SIZE)
        : null;
    const full = tail ? Buffer.concat([data, tail]) : data;
    svm.setAccount(
      ata,
      new Account(
        existing?.lamports ?? svm.minimumBalanceForRentExemption(BigInt(full.length)),
        full,
        tokenProgram,
        false,
        existing?.rentEpoch ?? U64_MAX,
      ),
    );
    dirty = true;
    return ata;
  }

  /** Moves slot and clock forward (never back) to the target; returns the new epoch info. */
  function timeTravel(target: TimeTravelTarget): EpochInfo {
    sync();
    const now = chainNowMs();
    if (target.absoluteTimestamp !== undefined) {
      if (target.absoluteTimestamp < now) {
        throw new LedgerInputError(
          `Cannot travel to the past: ${target.absoluteTimestamp} is before the current time ${now}`,
        );
      }
      offsetMs += target.absoluteTimestamp - now;
    } else {
      const targetSlot =
        target.absoluteSlot ??
        (target.absoluteEpoch !== undefined ? target.absoluteEpoch * SLOTS_PER_EPOCH : undefined);
      if (targetSlot === undefined || !Number.isSafeInteger(targetSlot) || targetSlot < 0) {
        throw new LedgerInputError(
          'Invalid param: give one of absoluteTimestamp, absoluteSlot, absoluteEpoch',
        );
      }
      if (targetSlot < slot) {
        throw new LedgerInputError(
          `Cannot travel to the past: slot ${targetSlot} is before the current slot ${slot}`,
        );
      }
      const startOfTarget = anchorMs + (targetSlot - anchorSlot) * slotMs;
      if (startOfTarget > now) offsetMs += startOfTarget - now;
    }
    sync();
    return epochInfo();
  }

  function epochInfo(): EpochInfo {
    sync();
    return {
      absoluteSlot: slot,
      blockHeight: slot,
      epoch: Math.floor(slot / SLOTS_PER_EPOCH),
      slotIndex: slot % SLOTS_PER_EPOCH,
      slotsInEpoch: SLOTS_PER_EPOCH,
      transactionCount,
    };
  }

  return {
    sync,
    submit,
    simulate,
    airdrop,
    setAccount,
    setTokenAccount,
    timeTravel,
    epochInfo,
    genesisHash,
    faucetAddress: encodeBase58(faucetPublic),
    slotMs,
    /** The current slot (which is also the block height: this chain skips no slot). */
    slot(): number {
      sync();
      return slot;
    },
    /** The chain's current time in Unix milliseconds (wall time plus any time travel). */
    chainTimeMs(): number {
      return chainNowMs();
    },
    /** Unix seconds of the current slot, as the Clock sysvar holds it. */
    unixTimestamp(): number {
      sync();
      return unixSecondsAt(slot);
    },
    latestBlockhash(): { blockhash: string; lastValidBlockHeight: number } {
      sync();
      return { blockhash: latest.blockhash, lastValidBlockHeight: latest.slot + BLOCKHASH_VALID_SLOTS };
    },
    isBlockhashValid(blockhash: string): boolean {
      sync();
      const bytes = decodeBase58Exact(blockhash, 32);
      const entry = bytes && blockhashes.get(keyOf(bytes));
      return !!entry && slot - entry.slot <= BLOCKHASH_VALID_SLOTS;
    },
    /** The fee of a message, or null when its blockhash is not usable. */
    feeForMessage(message: WireMessage): bigint | null {
      sync();
      const entry = blockhashes.get(keyOf(message.recentBlockhash));
      if (!entry || slot - entry.slot > BLOCKHASH_VALID_SLOTS) return null;
      return computeFee(message, (i) => {
        const key = message.staticKeys[i];
        return key ? keyOf(key) : undefined;
      });
    },
    getAccount(key: Uint8Array): LedgerAccount | null {
      sync();
      return readAccount(key);
    },
    getBalance(key: Uint8Array): bigint {
      sync();
      return svm.getBalance(key) ?? 0n;
    },
    programAccounts(program: Uint8Array): { key: Uint8Array; account: LedgerAccount }[] {
      sync();
      const out: { key: Uint8Array; account: LedgerAccount }[] = [];
      for (const entry of svm.getProgramAccounts(program)) {
        const account = entry.account();
        const lamports = account.lamports();
        if (lamports === 0n) continue;
        out.push({
          key: entry.address,
          account: {
            lamports,
            owner: account.owner(),
            data: account.data(),
            executable: account.executable(),
            rentEpoch: account.rentEpoch(),
          },
        });
      }
      return out;
    },
    minimumBalanceForRentExemption(size: number): bigint {
      return svm.minimumBalanceForRentExemption(BigInt(size));
    },
    /** The record of a landed transaction, if the chain still remembers it. */
    getTransaction(signature: string): TxRecord | undefined {
      sync();
      return records.get(signature);
    },
    /** The status of a signature, as getSignatureStatuses reports it. */
    signatureStatus(signature: string, searchTransactionHistory: boolean): TxRecord | null {
      sync();
      const rec = records.get(signature);
      if (!rec) return null;
      return searchTransactionHistory || slot - rec.slot <= STATUS_CACHE_SLOTS ? rec : null;
    },
    /** Calls `listener` with each new slot; returns the unsubscribe function. */
    onSlot(listener: (slot: number) => void): () => void {
      slotListeners.add(listener);
      return () => slotListeners.delete(listener);
    },
    /** Calls `listener` with each landed transaction and the keys it could write. */
    onTransaction(listener: (record: TxRecord, writableKeys: Uint8Array[]) => void): () => void {
      txListeners.add(listener);
      return () => txListeners.delete(listener);
    },
    /** Whether anything changed since the last `exportState`. */
    isDirty(): boolean {
      return dirty || pending.length > 0;
    },
    /** Captures a consistent snapshot plus the records landed since the previous capture. */
    exportState(): { svmBytes: Uint8Array; meta: LedgerMeta; newRecords: TxRecord[] } {
      const meta: LedgerMeta = {
        version: 1,
        genesisHash,
        faucetSeed: faucetSeed.toString('hex'),
        slot,
        chainTimeMs: chainNowMs(),
        seq,
        transactionCount,
        airdropCount,
        blockhashes: [...blockhashes.values()].map((e) => [e.blockhash, e.slot]),
      };
      const newRecords = pending;
      pending = [];
      dirty = false;
      return { svmBytes: svm.toBytes(), meta, newRecords };
    },
    /** Records currently remembered, oldest first. */
    allRecords(): IterableIterator<TxRecord> {
      return records.values();
    },
  };
}
