/**
 * The service's one error type. Every failure a client can see carries a stable `MH_` code;
 * the HTTP status comes from {@link ERROR_CODES} so a code always means the same status.
 */

/** Every error code of the API with its HTTP status and a default, actionable message. */
export const ERROR_CODES = {
  MH_001: { status: 401, message: 'Invalid or missing API key.' },
  MH_002: { status: 401, message: 'This API key has been revoked.' },
  MH_003: { status: 403, message: 'This integration is suspended.' },
  MH_004: { status: 429, message: 'Rate limit exceeded.' },
  MH_010: { status: 400, message: 'Unsupported token mint or missing pricing context.' },
  MH_011: { status: 400, message: 'Invalid wallet address.' },
  MH_012: { status: 400, message: 'Amount below minimum.' },
  MH_013: { status: 400, message: 'Hops out of range (3 to 10).' },
  MH_014: { status: 400, message: 'Arrival time below minimum for hop count.' },
  MH_015: { status: 400, message: 'Invalid external id format.' },
  MH_016: { status: 400, message: 'Invalid request.' },
  MH_030: { status: 404, message: 'Transfer not found.' },
  MH_031: { status: 500, message: 'Route creation failed.' },
  MH_032: { status: 408, message: 'Funding not completed within timeout.' },
  MH_033: { status: 409, message: 'Transfer already exists (duplicate externalId).' },
  MH_034: { status: 410, message: 'Transfer expired.' },
  MH_035: { status: 409, message: 'Transfer not in a state that allows broadcast confirmation.' },
  MH_036: { status: 404, message: 'Broadcast signature not found on chain.' },
  MH_037: { status: 422, message: 'Broadcast transaction failed on chain.' },
  MH_038: { status: 422, message: "Broadcast transaction did not invoke the service's on-chain program." },
  MH_039: { status: 400, message: 'Keeper funding signature required but not provided.' },
  MH_050: { status: 400, message: 'Webhook URL unreachable.' },
  MH_051: { status: 400, message: 'Maximum webhook endpoints reached.' },
  MH_060: { status: 400, message: 'Below minimum claim threshold.' },
  MH_061: { status: 400, message: 'Rewards wallet not set.' },
  MH_070: { status: 400, message: 'Idempotency-Key header missing or invalid.' },
  MH_071: { status: 409, message: 'Idempotency-Key reused with a different body.' },
  MH_072: { status: 409, message: 'Idempotency-Key request still in progress.' },
  MH_080: { status: 409, message: 'Recovery action not allowed in current phase.' },
  MH_081: { status: 409, message: 'Nothing to rescue.' },
  MH_082: { status: 409, message: 'Nothing to reclaim.' },
  MH_083: { status: 400, message: 'Provided rescue signatures do not match the prepared bundle.' },
  MH_090: { status: 500, message: 'Internal server error.' },
  MH_091: { status: 503, message: 'Service temporarily unavailable.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * HTTP statuses that MH_016 may carry besides 400, for requests refused at the protocol level
 * before a route runs (unknown route, body too slow, oversized URL or headers, unsupported media
 * type or expectation).
 */
export type ProtocolStatus = 404 | 405 | 406 | 408 | 413 | 414 | 415 | 417 | 431;

export interface AppErrorOptions {
  /** The request field or parameter at fault, when there is one. */
  param?: string;
  /** Overrides the code's status; only for MH_016 protocol-level rejections. */
  status?: ProtocolStatus;
  /** Headers the response must carry (e.g. `Retry-After`). */
  headers?: Record<string, string>;
  cause?: unknown;
}

/** A failure with a stable API error code. Thrown anywhere; mapped to the envelope at the edge. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly param: string | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message?: string, options: AppErrorOptions = {}) {
    super(message ?? ERROR_CODES[code].message, { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = code === 'MH_016' && options.status ? options.status : ERROR_CODES[code].status;
    this.param = options.param;
    this.headers = options.headers ?? {};
  }
}

/** True when `value` is an {@link AppError}. */
export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

/**
 * The error for a rule violation that domain logic reports as a lower-case clause, made a sentence
 * (a clause that starts with the parameter's name keeps it as spelled).
 */
export function issueError(issue: { code: ErrorCode; param: string; message: string }): AppError {
  const { message, param } = issue;
  const sentence = message.startsWith(param) ? message : message.charAt(0).toUpperCase() + message.slice(1);
  return new AppError(issue.code, sentence.endsWith('.') ? sentence : `${sentence}.`, { param: issue.param });
}
