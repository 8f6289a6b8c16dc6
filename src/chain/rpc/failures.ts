// What an attempt of an RPC call can throw, translated into one ChainError with a stable code;
// the code says whether another attempt may succeed.
import { isSolanaError, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR, type TransactionError } from '@solana/kit';
import { ChainError, type ChainErrorCode } from '../errors.ts';

/** A JSON-RPC error answer, thrown by the transport before kit reshapes it. */
export class JsonRpcFailure extends Error {
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

/** A ChainError with the wait a 429 asked for, if it named one. */
export type ClassifiedError = ChainError & { waitMs?: number };

/**
 * Transaction errors as plain JSON numbers: kit's parser turns every integer into a bigint, but an
 * error holds only small indexes and u32 codes, and callers compare it with literal JSON.
 */
export function plainError(err: unknown): TransactionError | null {
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

/** A JSON-RPC error answer; a failed preflight keeps the transaction's error, logs and units. */
function fromJsonRpc(error: JsonRpcFailure, method: string): ChainError {
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

/** An HTTP error status, with the wait its Retry-After header asks for. */
function fromHttpStatus(error: unknown, status: number, headers: unknown, method: string): ClassifiedError {
  const code: ChainErrorCode =
    status === 429
      ? 'CHAIN_RATE_LIMITED'
      : status === 408 || status === 504
        ? 'CHAIN_TIMEOUT'
        : status >= 500
          ? 'CHAIN_UNAVAILABLE'
          : 'CHAIN_RPC_ERROR';
  const out: ClassifiedError = new ChainError(code, `${method}: HTTP ${status}`, {
    cause: error,
    context: { method, httpStatus: status },
  });
  out.waitMs = retryAfterMs(headers);
  return out;
}

/** Translates anything an attempt threw into a ChainError (with the wait a 429 asked for). */
export function classify(
  error: unknown,
  method: string,
  callerSignal: AbortSignal | undefined,
): ClassifiedError {
  if (error instanceof ChainError) return error;
  if (callerSignal?.aborted)
    return new ChainError('CHAIN_ABORTED', `${method} was aborted`, { cause: error, context: { method } });
  if (error instanceof JsonRpcFailure) return fromJsonRpc(error, method);
  if (isSolanaError(error, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR)) {
    return fromHttpStatus(error, error.context.statusCode, error.context.headers, method);
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
