import {
  type Base64EncodedWireTransaction,
  type GetBlockHeightApi,
  type GetSignatureStatusesApi,
  getSolanaErrorFromTransactionError,
  isSolanaError,
  type Rpc,
  type SendTransactionApi,
  type Signature,
  SOLANA_ERROR__JSON_RPC__INTERNAL_ERROR,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_BLOCK_NOT_AVAILABLE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_BLOCK_STATUS_NOT_AVAILABLE_YET,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_MIN_CONTEXT_SLOT_NOT_REACHED,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_NODE_UNHEALTHY,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
  SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED,
  SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND,
  type SolanaError,
} from '@solana/kit';
import { delay } from './client.ts';
import { type LandingRpc, landTransaction, type SignedTransaction } from './landing/index.ts';
import { LandingError } from './landing-error.ts';

/*
 * How the client lands what the wallet signed: by the service's own landing policy (./landing/,
 * the service's packages/landing, carried as a copy), over the wallet's @solana/kit RPC. Each RPC
 * call is tried as the service's RPC client tries it: up to 3 attempts of at most 3 s, with
 * jittered backoff, when the node answered weather.
 */

/** What landing a transaction asks of an RPC node (`createSolanaRpc` answers all of it). */
export type LandingRpcApi = GetBlockHeightApi & GetSignatureStatusesApi & SendTransactionApi;

/** How the client lands a transaction: landed at `confirmed` (default) or only once `finalized`. */
export interface LandOptions {
  commitment?: 'confirmed' | 'finalized' | undefined;
  signal?: AbortSignal | undefined;
}

const ATTEMPTS = 3;
const ATTEMPT_TIMEOUT_MS = 3_000;
const BACKOFF_MS = 250;

/** JSON-RPC errors of a node failing or behind. */
const WEATHER_CODES: ReadonlySet<number> = new Set([
  SOLANA_ERROR__JSON_RPC__INTERNAL_ERROR,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_BLOCK_NOT_AVAILABLE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_NODE_UNHEALTHY,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_BLOCK_STATUS_NOT_AVAILABLE_YET,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_MIN_CONTEXT_SLOT_NOT_REACHED,
]);

/**
 * Whether a failed RPC call may succeed unchanged a moment later: HTTP 408, 429 or 5xx, a node
 * failing or behind, an attempt that timed out, a connection refused or reset.
 */
export function isWeather(error: unknown): boolean {
  if (isSolanaError(error, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR)) {
    const status = error.context.statusCode;
    return status === 408 || status === 429 || status >= 500;
  }
  if (isSolanaError(error)) return WEATHER_CODES.has(error.context.__code);
  // fetch() reports a refused, reset or unresolvable connection as a TypeError.
  return (error as { name?: unknown } | null)?.name === 'TimeoutError' || error instanceof TypeError;
}

/** Runs one RPC call, again after weather, each attempt cut at its timeout or the caller's abort. */
async function withRetries<T>(
  run: (abortSignal: AbortSignal) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const timeout = AbortSignal.timeout(ATTEMPT_TIMEOUT_MS);
    try {
      return await run(signal ? AbortSignal.any([signal, timeout]) : timeout);
    } catch (error) {
      if (signal?.aborted || attempt >= ATTEMPTS || !isWeather(error)) throw error;
      await delay(BACKOFF_MS * 2 ** (attempt - 1) * (0.5 + Math.random()), signal);
    }
  }
}

/** The landing policy's view of a kit RPC: kit's errors say what a send's failure means. */
function landingRpcOf(rpc: Rpc<LandingRpcApi>): LandingRpc<SolanaError> {
  return {
    async sendTransaction(base64, { signal }) {
      try {
        await withRetries(
          (abortSignal) =>
            rpc
              .sendTransaction(base64 as Base64EncodedWireTransaction, {
                encoding: 'base64',
                // Each transaction may need what the one before created, confirmed a moment ago.
                preflightCommitment: 'confirmed',
              })
              .send({ abortSignal }),
          signal,
        );
        return 'sent';
      } catch (error) {
        if (!isSolanaError(error, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE)) {
          throw error;
        }
        if (isSolanaError(error.cause, SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED)) return 'sent';
        if (isSolanaError(error.cause, SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND)) {
          return 'blockhash_not_found';
        }
        return { refused: error };
      }
    },
    async getSignatureStatus(signature, { signal, searchTransactionHistory }) {
      const { value } = await withRetries(
        (abortSignal) =>
          rpc.getSignatureStatuses([signature], { searchTransactionHistory }).send({ abortSignal }),
        signal,
      );
      const [status] = value;
      return status ? { err: status.err, confirmationStatus: status.confirmationStatus } : null;
    },
    getBlockHeight: ({ signal }) =>
      withRetries(
        (abortSignal) => rpc.getBlockHeight({ commitment: 'confirmed' }).send({ abortSignal }),
        signal,
      ),
    isWeather,
  };
}

/**
 * Lands signed bytes as the service lands its own: sent again, the same bytes, every 2 s until
 * confirmed or expired. Answers the signature once landed; throws a {@link LandingError} saying
 * how it did not (refused in preflight, landed and failed, or expired).
 */
export async function landSigned(
  rpc: Rpc<LandingRpcApi>,
  transaction: SignedTransaction,
  options: LandOptions,
): Promise<Signature> {
  const outcome = await landTransaction(landingRpcOf(rpc), transaction, options);
  const signature = transaction.signature as Signature;
  if (outcome.kind === 'landed') return signature;
  if (outcome.kind === 'expired') throw new LandingError('expired', signature);
  if (outcome.kind === 'failed') {
    const cause = getSolanaErrorFromTransactionError(outcome.error);
    throw new LandingError('failed', signature, { cause, detail: cause.message });
  }
  // The refusal's cause is the transaction's error; the refusal itself holds the logs.
  const { refusal } = outcome;
  const detail = refusal.cause instanceof Error ? refusal.cause.message : refusal.message;
  throw new LandingError('refused', signature, { cause: refusal, detail });
}
