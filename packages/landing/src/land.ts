import type { Commitment, Signature, TransactionError } from '@solana/kit';

/*
 * How a signed transaction lands, the way production senders do: the same signed bytes are sent
 * again every couple of seconds while their blockhash lives (an RPC node or leader may drop them
 * at any point, and the same transaction lands at most once), a transaction counts as landed only
 * once `confirmed` (a `processed` one may sit on a fork that is dropped), and it is given up only
 * once its last valid block height has passed and the chain's whole history does not have it. A
 * refusal by the node's preflight check is the verdict (nothing was charged); a node throttling,
 * failing or slow for a moment is weather, never a verdict on the bytes.
 */

/** A signed transaction, kept as sent so that the very same bytes can be sent again. */
export interface SignedTransaction {
  /** Its wire bytes, in base64. */
  base64: string;
  signature: string;
  /** The last block height at which its blockhash is accepted. */
  validUntil: bigint;
}

/** Where a transaction stands, as a node reports it. */
export interface LandingStatus {
  err: TransactionError | null;
  confirmationStatus: Commitment | null;
}

/**
 * What a node answered a send: it took the bytes (or had them already), it does not know their
 * blockhash (yet, or any more), or its preflight check refused them, with what it said (`R`).
 */
export type SendAnswer<R> = 'sent' | 'blockhash_not_found' | { refused: R };

export interface CallOptions {
  signal?: AbortSignal | undefined;
}

/** What landing asks of an RPC node: each sender adapts its own RPC client to it. */
export interface LandingRpc<R> {
  /** Sends the bytes once, preflight checked; throws what is neither an acceptance nor a refusal. */
  sendTransaction(base64: string, options: CallOptions): Promise<SendAnswer<R>>;
  /** The transaction's status; null when the node does not know it. */
  getSignatureStatus(
    signature: Signature,
    options: CallOptions & { searchTransactionHistory: boolean },
  ): Promise<LandingStatus | null>;
  getBlockHeight(options: CallOptions): Promise<bigint>;
  /** Whether a call that failed may succeed unchanged a moment later (429, 5xx, a timeout, a node behind). */
  isWeather(error: unknown): boolean;
}

/**
 * What became of a transaction: it landed and succeeded; it landed and failed (its fee was
 * charged); the node's preflight refused it (nothing was charged); or it expired unlanded.
 */
export type LandingOutcome<R> =
  | { kind: 'landed' }
  | { kind: 'failed'; error: TransactionError }
  | { kind: 'refused'; refusal: R }
  | { kind: 'expired' };

export interface LandingOptions extends CallOptions {
  /** The time now in milliseconds (default `Date.now`), which paces re-sending. */
  now?: (() => number) | undefined;
  /** How often the same bytes are sent again while unconfirmed (default 2 s). */
  resendMs?: number | undefined;
  /** How often the status is read (default 400 ms). */
  pollMs?: number | undefined;
  /** Landed at `confirmed` (default) or only once `finalized`. */
  commitment?: 'confirmed' | 'finalized' | undefined;
  /**
   * The bytes may have been sent before (by a process that died): a refusal of this first send is
   * then no verdict on them either, and their status says what became of them.
   */
  resumed?: boolean | undefined;
  /** Called once the bytes are out: the node took them (or, resumed, had them already). */
  onSent?: (() => void) | undefined;
}

/** A wait that ends early, rejecting, when `signal` aborts; no timer API of one platform. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', abort, { once: true });
  });
}

/**
 * Sends a signed transaction and waits until it is confirmed or its blockhash expired, sending the
 * same bytes again every `resendMs` meanwhile (sending bytes that landed already is harmless).
 */
export async function landTransaction<R>(
  rpc: LandingRpc<R>,
  transaction: SignedTransaction,
  options: LandingOptions = {},
): Promise<LandingOutcome<R>> {
  const { signal } = options;
  const now = options.now ?? Date.now;
  const signature = transaction.signature as Signature;
  const settled = (status: LandingStatus | null): status is LandingStatus =>
    status?.confirmationStatus === 'finalized' ||
    (status?.confirmationStatus === 'confirmed' && options.commitment !== 'finalized');
  const outcomeOf = (status: LandingStatus): LandingOutcome<R> =>
    status.err === null ? { kind: 'landed' } : { kind: 'failed', error: status.err };

  const first = await rpc.sendTransaction(transaction.base64, { signal });
  // A node that does not know the blockhash may only lag: the status and block height settle it.
  // A refusal is the verdict unless the bytes are known already: sent before this send (resumed),
  // or by an earlier attempt of it whose answer was lost (the node then refuses what already ran).
  if (
    typeof first === 'object' &&
    !options.resumed &&
    !(await rpc.getSignatureStatus(signature, { signal, searchTransactionHistory: false }))
  ) {
    return { kind: 'refused', refusal: first.refused };
  }
  options.onSent?.();
  let sentAt = now();
  /** One look at the transaction: what became of it, or undefined while it is on its way. */
  const look = async (): Promise<LandingOutcome<R> | undefined> => {
    const status = await rpc.getSignatureStatus(signature, { signal, searchTransactionHistory: false });
    if (settled(status)) return outcomeOf(status);
    if ((await rpc.getBlockHeight({ signal })) > transaction.validUntil) {
      // It may have landed in its last valid block, after the status above was read.
      const last = await rpc.getSignatureStatus(signature, { signal, searchTransactionHistory: true });
      if (settled(last)) return outcomeOf(last);
      if (!last) return { kind: 'expired' };
      // Processed but not confirmed yet: its block is confirmed or dropped within moments.
    } else if (now() - sentAt >= (options.resendMs ?? 2_000)) {
      // The node took these bytes before: a refusal now (the state moved on, or they landed), or a
      // node throttling or down for a moment, is no verdict on them; their status says what became
      // of them.
      await rpc.sendTransaction(transaction.base64, { signal }).catch((error: unknown) => {
        if (!rpc.isWeather(error)) throw error;
      });
      sentAt = now();
    }
    return undefined;
  };
  // A look the node's weather spoiled is a look missed (a sender reading many statuses in one call
  // shares its bad moments); only MAX_MISSED_LOOKS in a row end the landing with that weather.
  let missed = 0;
  for (;;) {
    const outcome = await look().then(
      (seen) => {
        missed = 0;
        return seen;
      },
      (error: unknown) => {
        if (!rpc.isWeather(error) || ++missed >= MAX_MISSED_LOOKS) throw error;
        return undefined;
      },
    );
    if (outcome) return outcome;
    await pause(options.pollMs ?? 400, signal);
  }
}

/** Looks in a row that a node's weather may spoil before landing gives up with it. */
const MAX_MISSED_LOOKS = 5;
