import type { Signature } from '@solana/kit';

/** Why a transaction did not land. */
export type LandingErrorCode =
  /** The node's preflight check refused it: it never reached the chain and nothing was charged. */
  | 'refused'
  /** It landed and failed: its fee was charged, and nothing else of it happened. */
  | 'failed'
  /** Its blockhash expired and the chain's history does not have it: nothing was charged. */
  | 'expired';

const WHAT: Record<LandingErrorCode, string> = {
  refused: "was refused by the node's preflight check: it never reached the chain and nothing was charged",
  failed: 'landed and failed: its fee was charged, nothing else of it happened',
  expired:
    "expired unlanded: its last valid block height passed and the chain's history does not have it; nothing was charged",
};

/**
 * A transaction the client signed and sent did not land; `code` says how, `signature` names it,
 * and `cause` holds what the chain said (a `SolanaError` with the program's error and, for a
 * refusal, the simulation's logs in its context).
 */
export class LandingError extends Error {
  readonly code: LandingErrorCode;
  readonly signature: Signature;

  /** `detail`: what the chain said, in words. */
  constructor(
    code: LandingErrorCode,
    signature: Signature,
    options: { cause?: Error; detail?: string } = {},
  ) {
    super(
      `transaction ${signature} ${WHAT[code]}${options.detail ? ` (${options.detail})` : ''}`,
      options.cause ? { cause: options.cause } : undefined,
    );
    this.name = 'LandingError';
    this.code = code;
    this.signature = signature;
  }
}

/** Whether `error` is a {@link LandingError}, of one of `codes` when given. */
export function isLandingError(error: unknown, ...codes: LandingErrorCode[]): error is LandingError {
  return error instanceof LandingError && (codes.length === 0 || codes.includes(error.code));
}
