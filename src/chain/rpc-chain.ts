// The chain interface over any Solana JSON-RPC endpoint, built on @solana/kit's RPC client. Adds
// what a service needs on top of it: a timeout per attempt, retries with jittered exponential
// backoff on transient failures only (timeouts, 429, 5xx, unreachable node, node behind), and one
// error type with stable codes (ChainError) for every failure.
import { setTimeout as delay } from 'node:timers/promises';
import {
  type Address,
  type Base64EncodedWireTransaction,
  type Blockhash,
  type Commitment,
  createDefaultRpcTransport,
  createSolanaRpcFromTransport,
  type EncodedAccount,
  getBase58Decoder,
  isSolanaError,
  type Lamports,
  type RpcTransport,
  type Signature,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
  type TransactionError,
} from '@solana/kit';
import {
  accountNotFound,
  CLOCK_SYSVAR,
  decodeClockAccount,
  decodeMintAccount,
  decodeTokenAccount,
} from './accounts.ts';
import { ChainError, type ChainErrorCode } from './errors.ts';
import type {
  CallOptions,
  Chain,
  ChainTransaction,
  ReadOptions,
  SignatureStatus,
  TransactionTokenBalance,
  WireTransactionInput,
} from './types.ts';

const MAX_ACCOUNTS_PER_CALL = 100;
const MAX_SIGNATURES_PER_CALL = 256;

/** Options of createRpcChain. */
export interface RpcChainOptions {
  rpcUrl: string;
  /** Extra HTTP headers (API keys of RPC providers). */
  headers?: Record<string, string>;
  /** Commitment of reads unless a call says otherwise (default `confirmed`). */
  commitment?: Commitment;
  /** Time limit of one attempt (default 10 s). */
  timeoutMs?: number;
  /** Attempts per call, the first included (default 3). */
  maxAttempts?: number;
  /** Base of the exponential backoff between attempts (default 250 ms). */
  retryDelayMs?: number;
  /** Cap of one backoff wait, Retry-After included (default 5 s). */
  maxRetryDelayMs?: number;
}

/** A JSON-RPC error answer, thrown by the transport before kit reshapes it. */
class JsonRpcFailure extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(error: { code: unknown; message: unknown; data?: unknown }) {
    super(String(error.message));
    this.code = Number(error.code);
    this.data = error.data;
  }
}

interface PreflightData {
  err?: TransactionError | null;
  logs?: string[] | null;
  unitsConsumed?: bigint | number | null;
}

/**
 * Transaction errors as plain JSON numbers: kit's parser turns every integer into a bigint, but an
 * error holds only small indexes and u32 codes, and callers compare it with literal JSON.
 */
function plainError(err: unknown): TransactionError | null {
  if (err === null || err === undefined) return null;
  const plain = (v: unknown): unknown =>
    typeof v === 'bigint'
      ? Number(v)
      : Array.isArray(v)
        ? v.map(plain)
        : v && typeof v === 'object'
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]))
          : v;
  return plain(err) as TransactionError;
}

function toEncodedAccount(
  address: Address,
  value: {
    data: readonly [string, string];
    executable: boolean;
    lamports: Lamports;
    owner: Address;
    space: bigint;
  },
): EncodedAccount {
  return {
    address,
    data: new Uint8Array(Buffer.from(value.data[0], 'base64')),
    executable: value.executable,
    lamports: value.lamports,
    programAddress: value.owner,
    space: value.space,
  };
}

function jsonRpcCode(code: number, message: string, method: string): ChainErrorCode {
  switch (code) {
    case -32002:
      return 'CHAIN_PREFLIGHT_FAILED';
    case -32003:
      return 'CHAIN_SIGNATURE_INVALID';
    case -32004:
    case -32005:
    case -32014:
    case -32016:
      return 'CHAIN_NODE_BEHIND';
    case -32603:
      return 'CHAIN_UNAVAILABLE';
    case 429:
    case -32429:
      return 'CHAIN_RATE_LIMITED';
    case -32602:
      if (method === 'getTokenAccountBalance') {
        return /could not find account/i.test(message) ? 'CHAIN_ACCOUNT_NOT_FOUND' : 'CHAIN_INVALID_ACCOUNT';
      }
      return 'CHAIN_INVALID_ARGUMENT';
    default:
      return 'CHAIN_RPC_ERROR';
  }
}

function retryAfterMs(headers: unknown): number | undefined {
  const value = headers instanceof Headers ? headers.get('retry-after') : undefined;
  const seconds = value ? Number(value) : Number.NaN;
  return Number.isFinite(seconds) ? seconds * 1000 : undefined;
}

/** Translates anything an attempt threw into a ChainError (with the wait a 429 asked for). */
function classify(
  error: unknown,
  method: string,
  callerSignal: AbortSignal | undefined,
): ChainError & { waitMs?: number } {
  if (error instanceof ChainError) return error;
  if (callerSignal?.aborted)
    return new ChainError('CHAIN_ABORTED', `${method} was aborted`, { cause: error, context: { method } });
  if (error instanceof JsonRpcFailure) {
    const code = jsonRpcCode(error.code, error.message, method);
    const context: ChainError['context'] = { method, rpcCode: error.code };
    if (error.code === -32002 && error.data && typeof error.data === 'object') {
      const data = error.data as PreflightData;
      if (data.err) context.transactionError = plainError(data.err) as TransactionError;
      if (data.logs) context.logs = data.logs;
      if (data.unitsConsumed !== undefined && data.unitsConsumed !== null)
        context.unitsConsumed = BigInt(data.unitsConsumed);
      if (data.err === 'BlockhashNotFound') {
        return new ChainError('CHAIN_BLOCKHASH_NOT_FOUND', error.message, { cause: error, context });
      }
    }
    return new ChainError(code, error.message, { cause: error, context });
  }
  if (isSolanaError(error, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR)) {
    const status = error.context.statusCode;
    const context = { method, httpStatus: status };
    const code: ChainErrorCode =
      status === 429
        ? 'CHAIN_RATE_LIMITED'
        : status === 408 || status === 504
          ? 'CHAIN_TIMEOUT'
          : status >= 500
            ? 'CHAIN_UNAVAILABLE'
            : 'CHAIN_RPC_ERROR';
    const out: ChainError & { waitMs?: number } = new ChainError(code, `${method}: HTTP ${status}`, {
      cause: error,
      context,
    });
    out.waitMs = retryAfterMs(error.context.headers);
    return out;
  }
  const name = (error as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new ChainError('CHAIN_TIMEOUT', `${method} timed out`, { cause: error, context: { method } });
  }
  if (name === 'SyntaxError') {
    return new ChainError('CHAIN_BAD_RESPONSE', `${method}: the endpoint answered invalid JSON`, {
      cause: error,
      context: { method },
    });
  }
  if (error instanceof TypeError) {
    // fetch() reports refused, reset and unresolvable connections as a TypeError.
    return new ChainError('CHAIN_UNAVAILABLE', `${method}: ${error.message}`, {
      cause: error,
      context: { method },
    });
  }
  return new ChainError('CHAIN_RPC_ERROR', `${method} failed`, { cause: error, context: { method } });
}

function wireBase64(transaction: WireTransactionInput): Base64EncodedWireTransaction {
  return typeof transaction === 'string'
    ? transaction
    : (Buffer.from(transaction.buffer, transaction.byteOffset, transaction.byteLength).toString(
        'base64',
      ) as Base64EncodedWireTransaction);
}

function firstSignature(transaction: WireTransactionInput): Signature {
  const bytes = typeof transaction === 'string' ? Buffer.from(transaction, 'base64') : transaction;
  // One byte of signature count (any transaction has fewer than 128 signatures), then the first.
  return getBase58Decoder().decode(bytes.subarray(1, 65)) as Signature;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Creates the chain interface over a JSON-RPC endpoint. */
export function createRpcChain(options: RpcChainOptions): Chain {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxAttempts = options.maxAttempts ?? 3;
  const retryDelayMs = options.retryDelayMs ?? 250;
  const maxRetryDelayMs = options.maxRetryDelayMs ?? 5000;
  const defaultCommitment = options.commitment ?? 'confirmed';

  type TransportConfig = Parameters<typeof createDefaultRpcTransport>[0];
  const base = createDefaultRpcTransport({
    url: options.rpcUrl as `http${string}`,
    headers: options.headers as TransportConfig['headers'],
  });
  // JSON-RPC errors are intercepted here, before kit reshapes them, to keep their code and data.
  const transport = (async (config: Parameters<RpcTransport>[0]) => {
    const response = await base(config);
    if (response && typeof response === 'object' && 'error' in response && response.error) {
      throw new JsonRpcFailure(response.error as { code: unknown; message: unknown; data?: unknown });
    }
    return response;
  }) as RpcTransport;
  const rpc = createSolanaRpcFromTransport(transport);

  async function call<T>(
    method: string,
    run: (signal: AbortSignal) => Promise<T>,
    callOptions?: CallOptions,
  ): Promise<T> {
    const callerSignal = callOptions?.signal;
    for (let attempt = 1; ; attempt++) {
      if (callerSignal?.aborted) {
        throw new ChainError('CHAIN_ABORTED', `${method} was aborted`, {
          cause: callerSignal.reason,
          context: { method },
        });
      }
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = callerSignal ? AbortSignal.any([callerSignal, timeout]) : timeout;
      try {
        return await run(signal);
      } catch (thrown) {
        const error = classify(thrown, method, callerSignal);
        if (!error.retryable || attempt >= maxAttempts) throw error;
        const backoff = Math.random() * retryDelayMs * 2 ** (attempt - 1);
        try {
          await delay(Math.min(maxRetryDelayMs, error.waitMs ?? backoff), undefined, {
            signal: callerSignal,
          });
        } catch {
          throw new ChainError('CHAIN_ABORTED', `${method} was aborted`, {
            cause: callerSignal?.reason,
            context: { method },
          });
        }
      }
    }
  }

  const commitmentOf = (o?: ReadOptions) => o?.commitment ?? defaultCommitment;

  async function getAccount(address: Address, o?: ReadOptions): Promise<EncodedAccount | null> {
    const { value } = await call(
      'getAccountInfo',
      (abortSignal) =>
        rpc
          .getAccountInfo(address, { encoding: 'base64', commitment: commitmentOf(o) })
          .send({ abortSignal }),
      o,
    );
    return value ? toEncodedAccount(address, value) : null;
  }

  async function getMint(mint: Address, o?: ReadOptions) {
    const account = await getAccount(mint, o);
    if (!account) throw accountNotFound(mint);
    return decodeMintAccount(account);
  }

  return {
    async getMintDecimals(mint, o) {
      return (await getMint(mint, o)).decimals;
    },
    getMint,
    async getMinimumBalanceForRentExemption(dataLength, o) {
      return call(
        'getMinimumBalanceForRentExemption',
        (abortSignal) =>
          rpc
            .getMinimumBalanceForRentExemption(BigInt(dataLength), { commitment: commitmentOf(o) })
            .send({ abortSignal }),
        o,
      );
    },
    getAccount,
    async getAccounts(addresses, o) {
      const pages = await Promise.all(
        chunks(addresses, MAX_ACCOUNTS_PER_CALL).map((page) =>
          call(
            'getMultipleAccounts',
            (abortSignal) =>
              rpc
                .getMultipleAccounts(page, { encoding: 'base64', commitment: commitmentOf(o) })
                .send({ abortSignal }),
            o,
          ).then(({ value }) =>
            value.map((account, i) => (account ? toEncodedAccount(page[i] as Address, account) : null)),
          ),
        ),
      );
      return pages.flat();
    },
    async getBalance(address, o) {
      const { value } = await call(
        'getBalance',
        (abortSignal) => rpc.getBalance(address, { commitment: commitmentOf(o) }).send({ abortSignal }),
        o,
      );
      return value;
    },
    async getTokenAccount(address, o) {
      const account = await getAccount(address, o);
      return account && decodeTokenAccount(account);
    },
    async getTokenAccountBalance(address, o) {
      const { value } = await call(
        'getTokenAccountBalance',
        (abortSignal) =>
          rpc.getTokenAccountBalance(address, { commitment: commitmentOf(o) }).send({ abortSignal }),
        o,
      );
      return { amount: BigInt(value.amount), decimals: value.decimals };
    },
    async getLatestBlockhash(o) {
      const { value } = await call(
        'getLatestBlockhash',
        (abortSignal) => rpc.getLatestBlockhash({ commitment: commitmentOf(o) }).send({ abortSignal }),
        o,
      );
      return { blockhash: value.blockhash, lastValidBlockHeight: value.lastValidBlockHeight };
    },
    async isBlockhashValid(blockhash: Blockhash, o) {
      const { value } = await call(
        'isBlockhashValid',
        (abortSignal) =>
          rpc.isBlockhashValid(blockhash, { commitment: commitmentOf(o) }).send({ abortSignal }),
        o,
      );
      return value;
    },
    async getBlockHeight(o) {
      return call(
        'getBlockHeight',
        (abortSignal) => rpc.getBlockHeight({ commitment: commitmentOf(o) }).send({ abortSignal }),
        o,
      );
    },
    async getSlot(o) {
      return call(
        'getSlot',
        (abortSignal) => rpc.getSlot({ commitment: commitmentOf(o) }).send({ abortSignal }),
        o,
      );
    },
    async getClock(o) {
      return decodeClockAccount(await getAccount(CLOCK_SYSVAR, o));
    },
    async getSignatureStatuses(signatures, o) {
      const pages = await Promise.all(
        chunks(signatures, MAX_SIGNATURES_PER_CALL).map((page) =>
          call(
            'getSignatureStatuses',
            (abortSignal) =>
              rpc
                .getSignatureStatuses(page, {
                  searchTransactionHistory: o?.searchTransactionHistory ?? false,
                })
                .send({ abortSignal }),
            o,
          ).then(({ value }) =>
            value.map(
              (status): SignatureStatus | null =>
                status && {
                  slot: status.slot,
                  err: plainError(status.err),
                  confirmationStatus: status.confirmationStatus,
                },
            ),
          ),
        ),
      );
      return pages.flat();
    },
    async getTransaction(signature, o): Promise<ChainTransaction | null> {
      const commitment = defaultCommitment === 'processed' ? 'confirmed' : defaultCommitment;
      const tx = await call(
        'getTransaction',
        (abortSignal) =>
          rpc
            .getTransaction(signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment })
            .send({ abortSignal }),
        o,
      );
      if (!tx) return null;
      const meta = tx.meta;
      const message = tx.transaction.message;
      const loaded = meta?.loadedAddresses;
      const keys = [
        ...message.accountKeys,
        ...(loaded?.writable ?? []),
        ...(loaded?.readonly ?? []),
      ] as Address[];
      const invoked: Address[] = [];
      const note = (index: number) => {
        const program = keys[index];
        if (program && !invoked.includes(program)) invoked.push(program);
      };
      message.instructions.forEach((ix, i) => {
        note(ix.programIdIndex);
        for (const set of meta?.innerInstructions ?? []) {
          if (set.index === i) for (const inner of set.instructions) note(inner.programIdIndex);
        }
      });
      const tokenBalance = (t: {
        accountIndex: number;
        mint: Address;
        owner?: Address;
        programId?: Address;
        uiTokenAmount: { amount: string; decimals: number };
      }): TransactionTokenBalance => ({
        accountIndex: t.accountIndex,
        account: keys[t.accountIndex] as Address,
        mint: t.mint,
        owner: t.owner ?? null,
        programAddress: t.programId ?? null,
        amount: BigInt(t.uiTokenAmount.amount),
        decimals: t.uiTokenAmount.decimals,
      });
      return {
        signature,
        slot: tx.slot,
        blockTime: tx.blockTime,
        err: plainError(meta?.err),
        logs: meta?.logMessages ?? [],
        invokedPrograms: invoked,
        fee: (meta?.fee ?? 0n) as Lamports,
        computeUnitsConsumed: meta?.computeUnitsConsumed ?? null,
        accountKeys: keys,
        preBalances: meta?.preBalances ?? [],
        postBalances: meta?.postBalances ?? [],
        preTokenBalances: (meta?.preTokenBalances ?? []).map(tokenBalance),
        postTokenBalances: (meta?.postTokenBalances ?? []).map(tokenBalance),
      };
    },
    async getRecentPrioritizationFees(addresses, o) {
      const fees = await call(
        'getRecentPrioritizationFees',
        (abortSignal) => rpc.getRecentPrioritizationFees(addresses).send({ abortSignal }),
        o,
      );
      return fees.map(({ slot, prioritizationFee }) => ({ slot, prioritizationFee }));
    },
    async sendTransaction(transaction, o) {
      const wire = wireBase64(transaction);
      try {
        return await call(
          'sendTransaction',
          (abortSignal) =>
            rpc
              .sendTransaction(wire, {
                encoding: 'base64',
                skipPreflight: o?.skipPreflight ?? false,
                preflightCommitment: o?.preflightCommitment ?? defaultCommitment,
              })
              .send({ abortSignal }),
          o,
        );
      } catch (error) {
        // The bytes already landed (a resend): that is success for the sender.
        if (error instanceof ChainError && error.context.transactionError === 'AlreadyProcessed') {
          return firstSignature(transaction);
        }
        throw error;
      }
    },
    async simulateTransaction(transaction, o) {
      const wire = wireBase64(transaction);
      const { value } = await call(
        'simulateTransaction',
        (abortSignal) =>
          rpc
            .simulateTransaction(wire, {
              encoding: 'base64',
              sigVerify: o?.sigVerify ?? false,
              replaceRecentBlockhash: o?.replaceRecentBlockhash ?? false,
              commitment: defaultCommitment,
            } as Parameters<typeof rpc.simulateTransaction>[1] & { encoding: 'base64' })
            .send({ abortSignal }),
        o,
      );
      return {
        err: plainError(value.err),
        logs: value.logs ?? [],
        unitsConsumed: value.unitsConsumed ?? null,
        returnData: value.returnData && {
          programAddress: value.returnData.programId,
          data: new Uint8Array(Buffer.from(value.returnData.data[0], 'base64')),
        },
        replacementBlockhash: value.replacementBlockhash ?? null,
      };
    },
  };
}
