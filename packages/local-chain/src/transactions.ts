// Transaction processing: a serialized transaction is checked against the blockhash window and the
// status cache, executed by LiteSVM, and recorded with what a validator reports about it (fee,
// balances and token balances before and after, logs, inner instructions, return data).
// Simulation runs the same checks and execution without committing anything.
import {
  Account,
  FailedTransactionMetadata,
  type LiteSvm,
  type TransactionMetadata,
} from 'litesvm/dist/internal.js';
import { encodeBase58 } from './base58.ts';
import { computeFee } from './fees.ts';
import {
  type History,
  type InnerInstructionRecord,
  STATUS_CACHE_SLOTS,
  type TokenBalanceRecord,
  type TxRecord,
} from './history.ts';
import { addressBytes, keyOf, keyOfAddress } from './keys.ts';
import type { Slots } from './slots.ts';
import { isMintData, isTokenAccountData, isTokenProgramBytes, readU64 } from './spl.ts';
import { type DescribedError, describeFailure, namedTransactionError } from './tx-error.ts';
import {
  decodeWireTransaction,
  isStaticKeyWritable,
  lookupsOf,
  type WireMessage,
  type WireTransaction,
  withBlockhash,
} from './wire.ts';

const SYSTEM_PROGRAM = '11111111111111111111111111111111';
const ALT_PROGRAM_KEY = keyOfAddress('AddressLookupTab1e1111111111111111111111111');
const ALT_META_SIZE = 56;
const NO_SIGNATURE = '1111111111111111111111111111111111111111111111111111111111111111';

/** An account as the runtime holds it. */
export interface LedgerAccount {
  lamports: bigint;
  owner: Uint8Array;
  data: Uint8Array;
  executable: boolean;
  rentEpoch: bigint;
}

/** An account of the runtime, or null when it holds no lamports (it does not exist). */
export function ledgerAccount(account: Account | null): LedgerAccount | null {
  const lamports = account?.lamports() ?? 0n;
  if (!account || lamports === 0n) return null;
  return {
    lamports,
    owner: account.owner(),
    data: account.data(),
    executable: account.executable(),
    rentEpoch: account.rentEpoch(),
  };
}

/** What happened to a submitted transaction. */
export type SubmitOutcome =
  | { kind: 'landed'; signature: string; record: TxRecord }
  /** Preflight refused it; nothing changed on chain. */
  | { kind: 'rejected'; signature: string; error: DescribedError; logs: string[]; unitsConsumed: bigint }
  /** Taken by a leader to include in a later slot (the mainnet profile): its status tells the rest. */
  | { kind: 'queued'; signature: string }
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
  loadedAddresses: LoadedAddresses;
}

/** Addresses a v0 message loads from lookup tables. */
interface LoadedAddresses {
  writable: Uint8Array[];
  readonly: Uint8Array[];
}

interface Balances {
  balances: bigint[];
  tokens: TokenBalanceRecord[];
}

/** Runs transactions against one runtime. */
export type Transactions = ReturnType<typeof createTransactions>;

/** Creates the transaction processor of a chain. */
export function createTransactions(options: {
  svm: LiteSvm;
  slots: Slots;
  history: History;
  /** Records landed so far (the sequence number of the last one). */
  seq: number;
  /** Called with each landed transaction, all its account keys and those it could write. */
  onLanded(record: TxRecord, keys: Uint8Array[], writable: Uint8Array[]): void;
  /** Called before a transaction runs for real, with the accounts it may write. */
  beforeExecute?(writable: Uint8Array[]): void;
}) {
  const { svm, slots, history } = options;
  let seq = options.seq;

  function resolveLookups(message: WireMessage): LoadedAddresses {
    const loaded: LoadedAddresses = { writable: [], readonly: [] };
    for (const lookup of lookupsOf(message)) {
      const table = svm.getAccount(addressBytes(lookup.lookupTableAddress));
      // LiteSVM refuses such a transaction itself; its keys are then the static ones.
      if (!table || keyOf(table.owner()) !== ALT_PROGRAM_KEY) return { writable: [], readonly: [] };
      const data = table.data();
      const address = (index: number) =>
        data.subarray(ALT_META_SIZE + index * 32, ALT_META_SIZE + index * 32 + 32);
      const count = (data.length - ALT_META_SIZE) / 32;
      if ([...lookup.writableIndexes, ...lookup.readonlyIndexes].some((index) => index >= count))
        return { writable: [], readonly: [] };
      for (const index of lookup.writableIndexes) loaded.writable.push(address(index));
      for (const index of lookup.readonlyIndexes) loaded.readonly.push(address(index));
    }
    return loaded;
  }

  function decimalsOf(mint: Uint8Array): number {
    const data = svm.getAccount(mint)?.data();
    return data && isMintData(data) ? (data[44] as number) : 0;
  }

  // Balances of every key, and token balances of every key that is neither an invoked program
  // nor a token program, as validators collect them (only when a token program is among the keys).
  function balancesOf(keys: Uint8Array[], invoked: Set<number>): Balances {
    const scanTokens = keys.some(isTokenProgramBytes);
    const balances: bigint[] = [];
    const tokens: TokenBalanceRecord[] = [];
    keys.forEach((key, i) => {
      if (!scanTokens || invoked.has(i) || isTokenProgramBytes(key)) {
        balances.push(svm.getBalance(key) ?? 0n);
        return;
      }
      const account = svm.getAccount(key);
      balances.push(account?.lamports() ?? 0n);
      const owner = account?.owner();
      const data = account?.data();
      if (!owner || !data || !isTokenProgramBytes(owner) || !isTokenAccountData(data)) return;
      const mint = data.subarray(0, 32);
      tokens.push({
        accountIndex: i,
        mint,
        owner: data.subarray(32, 64),
        programId: owner,
        amount: readU64(data, 64),
        decimals: decimalsOf(mint),
      });
    });
    return { balances, tokens };
  }

  function innerInstructionsOf(meta: TransactionMetadata) {
    const out: { index: number; instructions: InnerInstructionRecord[] }[] = [];
    meta.innerInstructions().forEach((set, index) => {
      if (set.length === 0) return;
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
    });
    return out;
  }

  function returnDataOf(meta: TransactionMetadata) {
    const returned = meta.returnData();
    const data = returned.data();
    return data.length === 0 ? null : { programId: returned.programId(), data };
  }

  function isNonceTransaction({ message }: WireTransaction): boolean {
    const first = message.instructions[0];
    // SystemInstruction::AdvanceNonceAccount is variant 4.
    return (
      !!first &&
      message.staticAccounts[first.programAddressIndex] === SYSTEM_PROGRAM &&
      first.data?.length === 4 &&
      first.data[0] === 4
    );
  }

  // A durable-nonce transaction (blockhash outside the window) is checked by LiteSVM's own nonce
  // logic, switched on for just that call.
  function withNonceCheck<T>(viaNonce: boolean, run: () => T): T {
    if (!viaNonce) return run();
    svm.setBlockhashCheck(true);
    try {
      return run();
    } finally {
      svm.setBlockhashCheck(false);
    }
  }

  function keysOf(message: WireMessage, loaded: LoadedAddresses): Uint8Array[] {
    return [...message.staticAccounts.map(addressBytes), ...loaded.writable, ...loaded.readonly];
  }

  function invokedIndexes(message: WireMessage): Set<number> {
    return new Set(message.instructions.map((ix) => ix.programAddressIndex));
  }

  function writableOf(message: WireMessage, keys: Uint8Array[], loaded: LoadedAddresses): Uint8Array[] {
    return [
      ...keys.slice(0, message.staticAccounts.length).filter((_, i) => isStaticKeyWritable(message, i)),
      ...loaded.writable,
    ];
  }

  function record(
    tx: WireTransaction,
    signature: string,
    keys: Uint8Array[],
    loaded: LoadedAddresses,
    pre: Balances,
    meta: TransactionMetadata,
    err: DescribedError | null,
  ): TxRecord {
    const { message } = tx;
    const post = balancesOf(keys, invokedIndexes(message));
    const slot = slots.current();
    const rec: TxRecord = {
      seq: ++seq,
      signature,
      slot,
      blockTime: slots.unixSecondsAt(slot),
      wire: tx.bytes.slice(),
      err,
      logs: meta.logs(),
      fee: computeFee(message),
      unitsConsumed: meta.computeUnitsConsumed(),
      loadedWritable: loaded.writable.map((k) => k.slice()),
      loadedReadonly: loaded.readonly.map((k) => k.slice()),
      preBalances: pre.balances,
      postBalances: post.balances,
      preTokenBalances: pre.tokens,
      postTokenBalances: post.tokens,
      innerInstructions: innerInstructionsOf(meta),
      returnData: returnDataOf(meta),
    };
    history.add(rec, message, slot);
    options.onLanded(rec, keys, writableOf(message, keys, loaded));
    return rec;
  }

  /**
   * What every transaction must pass before it may run: one signature per signer, a usable
   * blockhash (or durable nonce), a signature the status cache does not hold. Null when it passes.
   */
  function precheck(tx: WireTransaction, opts: { preflight: boolean }): SubmitOutcome | null {
    const { message } = tx;
    const firstSignature = tx.signatures[0];
    const signature = firstSignature ? encodeBase58(firstSignature) : NO_SIGNATURE;
    // As a validator's sanitizing does, before anything runs: one signature per signer.
    if (!firstSignature || tx.signatures.length !== message.header.numSignerAccounts) {
      return { kind: 'invalid', signature, error: namedTransactionError('SanitizeFailure') };
    }
    const refuse = (error: DescribedError): SubmitOutcome =>
      opts.preflight
        ? { kind: 'rejected', signature, error, logs: [], unitsConsumed: 0n }
        : { kind: 'dropped', signature, error };
    const inWindow = slots.blockhashSlot(message.lifetimeToken) !== undefined;
    if (!inWindow && !isNonceTransaction(tx)) return refuse(namedTransactionError('BlockhashNotFound'));
    const known = history.get(signature);
    if (known && (!inWindow || slots.current() - known.slot <= STATUS_CACHE_SLOTS)) {
      return refuse(namedTransactionError('AlreadyProcessed'));
    }
    return null;
  }

  /** Checks, executes and records a serialized transaction. Throws WireFormatError on bad bytes. */
  function submit(bytes: Uint8Array, opts: { preflight: boolean }): SubmitOutcome {
    const tx = decodeWireTransaction(bytes);
    const { message } = tx;
    const refused = precheck(tx, opts);
    if (refused) return refused;
    const signature = encodeBase58(tx.signatures[0] as Uint8Array);
    const refuse = (error: DescribedError, logs: string[] = [], unitsConsumed = 0n): SubmitOutcome =>
      opts.preflight
        ? { kind: 'rejected', signature, error, logs, unitsConsumed }
        : { kind: 'dropped', signature, error };
    const viaNonce = slots.blockhashSlot(message.lifetimeToken) === undefined;

    const loaded = resolveLookups(message);
    const keys = keysOf(message, loaded);
    const payer = keys[0] as Uint8Array;
    const pre = balancesOf(keys, invokedIndexes(message));
    options.beforeExecute?.(writableOf(message, keys, loaded));
    const result = withNonceCheck(viaNonce, () => svm.sendVersionedTransaction(tx.bytes));
    if (!(result instanceof FailedTransactionMetadata)) {
      return { kind: 'landed', signature, record: record(tx, signature, keys, loaded, pre, result, null) };
    }
    const meta = result.meta();
    const error = describeFailure(result);
    const payerBefore = pre.balances[0] as bigint;
    // A failure that charged no fee never made it into a block.
    if ((svm.getBalance(payer) ?? 0n) >= payerBefore) {
      if (error.json === 'SanitizeFailure') return { kind: 'invalid', signature, error };
      if (error.json === 'SignatureFailure' && opts.preflight)
        return { kind: 'signature-failure', signature };
      return refuse(error, meta.logs(), meta.computeUnitsConsumed());
    }
    if (opts.preflight) {
      // Preflight would have stopped it before any fee was taken: give the fee back.
      const account = svm.getAccount(payer);
      if (account) {
        svm.setAccount(
          payer,
          new Account(
            payerBefore,
            account.data(),
            account.owner(),
            account.executable(),
            account.rentEpoch(),
          ),
        );
      }
      return refuse(error, meta.logs(), meta.computeUnitsConsumed());
    }
    return { kind: 'landed', signature, record: record(tx, signature, keys, loaded, pre, meta, error) };
  }

  /**
   * Checks a transaction a leader is to include later (the mainnet profile): what `submit` checks,
   * and with preflight a simulation whose failure refuses it. Null when it may be sent on.
   */
  function admit(bytes: Uint8Array, opts: { preflight: boolean }): SubmitOutcome | null {
    const tx = decodeWireTransaction(bytes);
    const refused = precheck(tx, opts);
    if (refused || !opts.preflight) return refused;
    const signature = encodeBase58(tx.signatures[0] as Uint8Array);
    const outcome = simulate(bytes, {
      sigVerify: true,
      replaceRecentBlockhash: false,
      innerInstructions: false,
    });
    if (!outcome.err) return null;
    if (outcome.err.json === 'SanitizeFailure') return { kind: 'invalid', signature, error: outcome.err };
    if (outcome.err.json === 'SignatureFailure') return { kind: 'signature-failure', signature };
    return {
      kind: 'rejected',
      signature,
      error: outcome.err,
      logs: outcome.logs,
      unitsConsumed: outcome.unitsConsumed,
    };
  }

  /** Runs a transaction without committing it. Throws WireFormatError on bad bytes. */
  function simulate(
    bytes: Uint8Array,
    opts: { sigVerify: boolean; replaceRecentBlockhash: boolean; innerInstructions: boolean },
  ): SimulationOutcome {
    let tx = decodeWireTransaction(bytes);
    let replacementBlockhash: SimulationOutcome['replacementBlockhash'] = null;
    if (opts.replaceRecentBlockhash) {
      replacementBlockhash = slots.latest();
      tx = withBlockhash(tx, replacementBlockhash.blockhash);
    }
    const loaded = resolveLookups(tx.message);
    const outcome = {
      fee: computeFee(tx.message),
      replacementBlockhash,
      loadedAddresses: loaded,
      err: null as DescribedError | null,
      logs: [] as string[],
      unitsConsumed: 0n,
      returnData: null as SimulationOutcome['returnData'],
      innerInstructions: null as SimulationOutcome['innerInstructions'],
      postAccounts: new Map<string, LedgerAccount | null>(),
    };
    const inWindow = slots.blockhashSlot(tx.message.lifetimeToken) !== undefined;
    const viaNonce = !inWindow && isNonceTransaction(tx);
    if (!inWindow && !viaNonce) return { ...outcome, err: namedTransactionError('BlockhashNotFound') };
    if (!opts.sigVerify) svm.setSigverify(false);
    let result: ReturnType<LiteSvm['simulateVersionedTransaction']>;
    try {
      result = withNonceCheck(viaNonce, () => svm.simulateVersionedTransaction(tx.bytes));
    } finally {
      svm.setSigverify(true);
    }
    const meta = result.meta();
    if (result instanceof FailedTransactionMetadata) outcome.err = describeFailure(result);
    else {
      for (const entry of result.postAccounts())
        outcome.postAccounts.set(keyOf(entry.address), ledgerAccount(entry.account()));
    }
    return {
      ...outcome,
      logs: meta.logs(),
      unitsConsumed: meta.computeUnitsConsumed(),
      returnData: returnDataOf(meta),
      innerInstructions: opts.innerInstructions ? innerInstructionsOf(meta) : null,
    };
  }

  return {
    submit,
    admit,
    simulate,
    /** How many transactions have landed. */
    count: () => seq,
  };
}
