// One error class for everything the chain layer can fail with. Codes are stable (callers switch on
// them, logs and metrics count them); `retryable` says whether the same call may succeed later
// unchanged (timeouts, an overloaded or lagging node) or never will (a missing account, a refused
// transaction, a caller abort).
import type { TransactionError } from '@solana/kit';

/** Every code a ChainError can carry, with whether it is retryable. */
export const CHAIN_ERRORS = {
  /** The endpoint did not answer in time. */
  CHAIN_TIMEOUT: true,
  /** The endpoint could not be reached or answered 5xx / internal error. */
  CHAIN_UNAVAILABLE: true,
  /** The endpoint answered 429. */
  CHAIN_RATE_LIMITED: true,
  /** The node is unhealthy, behind, or has not reached the requested slot yet. */
  CHAIN_NODE_BEHIND: true,
  /** The caller's AbortSignal fired. */
  CHAIN_ABORTED: false,
  /** The endpoint refused the request for a reason not covered below. */
  CHAIN_RPC_ERROR: false,
  /** The endpoint answered something that is not a valid response. */
  CHAIN_BAD_RESPONSE: false,
  /** A parameter is malformed (bad address, bad transaction bytes). */
  CHAIN_INVALID_ARGUMENT: false,
  /** The account the call needs does not exist. */
  CHAIN_ACCOUNT_NOT_FOUND: false,
  /** The account exists but is not what the call needs (not a mint, not a token account). */
  CHAIN_INVALID_ACCOUNT: false,
  /** The transaction failed simulation before broadcast; `context` has the error and logs. */
  CHAIN_PREFLIGHT_FAILED: false,
  /** The transaction's blockhash is unknown or expired: sign again with a fresh one. */
  CHAIN_BLOCKHASH_NOT_FOUND: false,
  /** The transaction's signatures do not verify. */
  CHAIN_SIGNATURE_INVALID: false,
} as const;

/** A stable chain error code. */
export type ChainErrorCode = keyof typeof CHAIN_ERRORS;

/** Typed details some errors carry. */
export interface ChainErrorContext {
  /** The JSON-RPC method involved, when there was one. */
  method?: string;
  /** HTTP status of the endpoint's answer. */
  httpStatus?: number;
  /** JSON-RPC error code of the endpoint's answer. */
  rpcCode?: number;
  /** The transaction error, as RPC JSON. */
  transactionError?: TransactionError;
  /** Program logs of a failed simulation. */
  logs?: readonly string[];
  unitsConsumed?: bigint;
  /** The account involved. */
  address?: string;
}

/** The error every chain call throws. */
export class ChainError extends Error {
  override name = 'ChainError';
  readonly code: ChainErrorCode;
  readonly retryable: boolean;
  readonly context: ChainErrorContext;

  constructor(
    code: ChainErrorCode,
    message: string,
    options: { context?: ChainErrorContext; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = CHAIN_ERRORS[code];
    this.context = options.context ?? {};
  }
}

/** Whether `error` is a ChainError, optionally with the given code. */
export function isChainError(error: unknown, code?: ChainErrorCode): error is ChainError {
  return error instanceof ChainError && (code === undefined || error.code === code);
}
