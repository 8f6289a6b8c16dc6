// kit's RPC client over a JSON-RPC endpoint, with what every call of the chain interface goes
// through: a timeout per attempt, a hedge for an answer that is late, retries with jittered
// exponential backoff on transient failures only, and every failure translated into a ChainError.
import { setTimeout as delay } from 'node:timers/promises';
import {
  type Commitment,
  createDefaultRpcTransport,
  createSolanaRpcFromTransport,
  type Rpc,
  type RpcTransport,
  type SolanaRpcApi,
} from '@solana/kit';
import { ChainError } from '../errors.ts';
import type { CallOptions, ReadOptions } from '../types.ts';
import { classify, JsonRpcFailure } from './failures.ts';

/** Options of createRpcChain. */
export interface RpcChainOptions {
  rpcUrl: string;
  /** Extra HTTP headers (API keys of RPC providers). */
  headers?: Record<string, string>;
  /** Commitment of reads unless a call says otherwise (default `confirmed`). */
  commitment?: Commitment;
  /**
   * Time limit of one attempt (default 3 s): within the 8 s a request waits for its dependencies,
   * a hung answer is retried, not the request lost.
   */
  timeoutMs?: number;
  /**
   * Attempts per call, the first included (default 5): a provider throttling one request in
   * twenty, with `Retry-After: 1`, fails a call about once in three million. A caller's deadline
   * (its signal) ends the attempts sooner.
   */
  maxAttempts?: number;
  /**
   * An attempt not answered within this time is sent again beside the first copy, the first answer
   * winning (default 1 s; never for sendTransaction, whose re-sends the landing policy owns).
   */
  hedgeAfterMs?: number;
  /** Base of the exponential backoff between attempts (default 250 ms). */
  retryDelayMs?: number;
  /** Cap of one backoff wait, Retry-After included (default 5 s). */
  maxRetryDelayMs?: number;
}

type RetryPolicy = Required<
  Pick<RpcChainOptions, 'timeoutMs' | 'maxAttempts' | 'hedgeAfterMs' | 'retryDelayMs' | 'maxRetryDelayMs'>
>;

/** Requests never sent twice at once: copies of a send would race each other's preflight. */
const NOT_HEDGED = new Set(['sendTransaction']);

/**
 * One attempt of a request, and, when it has not answered within `hedgeAfterMs`, the same request
 * again beside it (a hedge): the first answer wins and the other copy is cancelled. A request hung
 * on one of a provider's nodes then costs the hedge's delay, not the attempt's whole timeout. An
 * answer or failure in time is taken as it is.
 */
async function hedged<T>(
  run: (signal: AbortSignal) => Promise<T>,
  signal: AbortSignal,
  hedgeAfterMs: number,
): Promise<T> {
  const done = new AbortController();
  const copy = () => run(AbortSignal.any([signal, done.signal]));
  try {
    const first = copy();
    const late = await Promise.race([
      first.then(
        () => false,
        () => false,
      ),
      delay(hedgeAfterMs, true, { signal: done.signal }),
    ]);
    if (!late) return await first;
    return await Promise.any([first, copy()]).catch((error: AggregateError) => {
      throw error.errors[0];
    });
  } finally {
    done.abort();
  }
}

/** kit's RPC methods, and the call every request of the chain interface is sent through. */
export interface RpcClient {
  rpc: Rpc<SolanaRpcApi>;
  /** Runs one request under the retry policy; `run` sends it with the attempt's abort signal. */
  call<T>(method: string, run: (signal: AbortSignal) => Promise<T>, callOptions?: CallOptions): Promise<T>;
  /** Commitment of reads unless a call says otherwise. */
  defaultCommitment: Commitment;
  /** A read's commitment: its own, else the default. */
  commitmentOf(options?: ReadOptions): Commitment;
}

function aborted(method: string, cause: unknown): ChainError {
  return new ChainError('CHAIN_ABORTED', `${method} was aborted`, { cause, context: { method } });
}

/** A transport that throws JSON-RPC errors before kit reshapes them, to keep their code and data. */
function createTransport(options: RpcChainOptions): RpcTransport {
  type TransportConfig = Parameters<typeof createDefaultRpcTransport>[0];
  const base = createDefaultRpcTransport({
    url: options.rpcUrl as `http${string}`,
    headers: options.headers as TransportConfig['headers'],
  });
  return (async (config: Parameters<RpcTransport>[0]) => {
    const response = await base(config);
    if (response && typeof response === 'object' && 'error' in response && response.error) {
      throw new JsonRpcFailure(response.error as { code: unknown; message: unknown; data?: unknown });
    }
    return response;
  }) as RpcTransport;
}

async function callWithRetries<T>(
  policy: RetryPolicy,
  method: string,
  run: (signal: AbortSignal) => Promise<T>,
  callOptions?: CallOptions,
): Promise<T> {
  const callerSignal = callOptions?.signal;
  for (let attempt = 1; ; attempt++) {
    if (callerSignal?.aborted) throw aborted(method, callerSignal.reason);
    const timeout = AbortSignal.timeout(policy.timeoutMs);
    const signal = callerSignal ? AbortSignal.any([callerSignal, timeout]) : timeout;
    try {
      return await (NOT_HEDGED.has(method) ? run(signal) : hedged(run, signal, policy.hedgeAfterMs));
    } catch (thrown) {
      const error = classify(thrown, method, callerSignal);
      if (!error.retryable || attempt >= policy.maxAttempts) throw error;
      const backoff = Math.random() * policy.retryDelayMs * 2 ** (attempt - 1);
      try {
        await delay(Math.min(policy.maxRetryDelayMs, error.waitMs ?? backoff), undefined, {
          signal: callerSignal,
        });
      } catch {
        throw aborted(method, callerSignal?.reason);
      }
    }
  }
}

/** Creates the RPC client of a JSON-RPC endpoint. */
export function createRpcClient(options: RpcChainOptions): RpcClient {
  const policy: RetryPolicy = {
    timeoutMs: options.timeoutMs ?? 3_000,
    maxAttempts: options.maxAttempts ?? 5,
    hedgeAfterMs: options.hedgeAfterMs ?? 1_000,
    retryDelayMs: options.retryDelayMs ?? 250,
    maxRetryDelayMs: options.maxRetryDelayMs ?? 5000,
  };
  const defaultCommitment = options.commitment ?? 'confirmed';
  return {
    rpc: createSolanaRpcFromTransport(createTransport(options)),
    call: (method, run, callOptions) => callWithRetries(policy, method, run, callOptions),
    defaultCommitment,
    commitmentOf: (o) => o?.commitment ?? defaultCommitment,
  };
}

/** Reads `items` in pages of at most `size` (the most one call takes), in parallel, in order. */
export async function inPages<T, R>(
  items: readonly T[],
  size: number,
  read: (page: T[]) => Promise<R[]>,
): Promise<R[]> {
  const pages: T[][] = [];
  for (let i = 0; i < items.length; i += size) pages.push(items.slice(i, i + size));
  return (await Promise.all(pages.map(read))).flat();
}
