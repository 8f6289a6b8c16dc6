// Helpers for code that tests against the local chain: a clock the test moves, so that slots pass
// without sleeping, transactions built and signed as a wallet builds them, in the forms the
// endpoint takes, and the Token program to run on (the legacy one's bytes too, for tests that run
// their own runtime). `@transfer-router/local-chain/testing`; the chain's own tests use them too.
import {
  appendTransactionMessageInstructions,
  type Base64EncodedWireTransaction,
  type Blockhash,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  getTransactionEncoder,
  type Instruction,
  pipe,
  type Signature,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type TransactionSigner,
} from '@solana/kit';
import type { Clock } from './clock.ts';
import { parseTokenProgram, type TokenProgramImplementation } from './legacy-token.ts';
import { DEFAULT_SLOT_MS } from './slots.ts';

export { LEGACY_TOKEN_PROGRAM_SHA256, legacyTokenProgram } from './legacy-token.ts';

/** A clock that stands still until the test advances it, so slots move without sleeping. */
export function manualClock(start = new Date('2026-01-01T00:00:00Z')): Clock & { advance(ms: number): void } {
  let ms = start.getTime();
  return {
    now: () => new Date(ms),
    advance: (by) => {
      ms += by;
    },
  };
}

/** A signed transaction in the forms tests need. */
export interface SignedTransaction {
  bytes: Uint8Array;
  base64: Base64EncodedWireTransaction;
  signature: Signature;
}

/** Builds and signs a v0 transaction paid by `payer` (extra signers come from the instructions). */
export async function signTransaction(
  payer: TransactionSigner,
  instructions: readonly Instruction[],
  lifetime: { blockhash: Blockhash | string; lastValidBlockHeight: bigint },
): Promise<SignedTransaction> {
  const tx = await pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: lifetime.blockhash as Blockhash, lastValidBlockHeight: lifetime.lastValidBlockHeight },
        m,
      ),
    (m) => appendTransactionMessageInstructions(instructions, m),
    (m) => signTransactionMessageWithSigners(m),
  );
  return {
    bytes: new Uint8Array(getTransactionEncoder().encode(tx)),
    base64: getBase64EncodedWireTransaction(tx),
    signature: getSignatureFromTransaction(tx),
  };
}

/**
 * The Token program implementation tests run on: `LOCAL_CHAIN_TOKEN_PROGRAM` (`p-token`, the
 * default, or `legacy`), so any test file can be run on the legacy program.
 */
export function tokenProgramFromEnv(env: NodeJS.ProcessEnv = process.env): TokenProgramImplementation {
  return parseTokenProgram(env.LOCAL_CHAIN_TOKEN_PROGRAM ?? 'p-token');
}

/** Milliseconds of `slots` slots at the default slot length. */
export const slotsMs = (slots: number) => slots * DEFAULT_SLOT_MS;

/**
 * A raw JSON-RPC call (the cheat methods too), asked again after a 429 or a 5xx, as clients do: the
 * mainnet profile's endpoint throttles and fails now and then. Throws on an error answer.
 */
export async function rpcCall<T = unknown>(url: string, method: string, params: unknown[]): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    if ((response.status === 429 || response.status >= 500) && attempt < 10) {
      await response.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      continue;
    }
    const body = (await response.json()) as { result?: T; error?: unknown };
    if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
    return body.result as T;
  }
}
