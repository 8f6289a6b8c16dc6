import {
  type CallOptions,
  delay,
  type Transfer,
  type TransferRouterClient,
  type TransferStatus,
} from './client.ts';
import type { WebhookEventSource } from './events.ts';

/** What a status can still become (decisions: status follows phase). */
const REACHABLE: Record<TransferStatus, readonly TransferStatus[]> = {
  quote: ['awaiting_signature', 'processing', 'completed', 'failed', 'expired', 'refunded'],
  awaiting_signature: ['processing', 'completed', 'failed', 'expired', 'refunded'],
  processing: ['completed', 'failed', 'refunded'],
  completed: [],
  failed: ['refunded'],
  expired: [],
  refunded: [],
};

/** The transfer reached a status from which the awaited one cannot follow. */
export class TransferWaitError extends Error {
  readonly transfer: Transfer;
  constructor(transfer: Transfer, wanted: readonly TransferStatus[]) {
    super(
      `transfer ${transfer.id} is ${transfer.status} (phase ${transfer.phase}${transfer.lastError ? `, ${transfer.lastError.code}: ${transfer.lastError.message}` : ''}) and can no longer become ${wanted.join(' or ')}`,
    );
    this.name = 'TransferWaitError';
    this.transfer = transfer;
  }
}

export interface WaitForTransferOptions {
  /** A status, one of several, or any condition on the transfer. */
  until: TransferStatus | readonly TransferStatus[] | ((transfer: Transfer) => boolean);
  /**
   * Verified webhook events (e.g. a receiver of `@transfer-router/client/webhooks`): the transfer
   * is read once, then followed through its events, without polling unless `pollIntervalMs` is
   * given too.
   */
  webhooks?: WebhookEventSource;
  /** How often to read the transfer (default 2 s; without it when following webhooks). */
  pollIntervalMs?: number;
  /** Gives up (rejects) after this long. */
  timeoutMs?: number;
  /** Called with the transfer when first read and whenever it has changed since. */
  onUpdate?: (transfer: Transfer) => void;
  signal?: AbortSignal;
}

/**
 * Resolves with the transfer once it satisfies `until`, reading it with `GET /transfers/{id}`
 * every `pollIntervalMs`, or following its webhook events. Rejects with a
 * {@link TransferWaitError} when the transfer reaches a status from which an awaited status cannot
 * follow (e.g. `failed` while waiting for `completed`).
 */
export async function waitForTransfer(
  client: Pick<TransferRouterClient, 'getTransfer'>,
  transferId: number,
  options: WaitForTransferOptions,
): Promise<Transfer> {
  const wanted = typeof options.until === 'function' ? undefined : [options.until].flat();
  const done =
    typeof options.until === 'function'
      ? options.until
      : (transfer: Transfer) => wanted!.includes(transfer.status);
  const stop = new AbortController();
  const signals = [
    stop.signal,
    options.signal,
    options.timeoutMs ? AbortSignal.timeout(options.timeoutMs) : undefined,
  ];
  const signal = AbortSignal.any(signals.filter((entry) => entry !== undefined));
  const call: CallOptions = { signal };

  return new Promise<Transfer>((resolve, reject) => {
    let unsubscribe: (() => void) | undefined;
    let last: string | undefined;
    const finish = (error: unknown, transfer?: Transfer) => {
      if (stop.signal.aborted) return;
      unsubscribe?.();
      stop.abort();
      if (transfer) resolve(transfer);
      else reject(error);
    };
    /** Answers whether `transfer` ends the wait. */
    const consider = (transfer: Transfer) => {
      if (stop.signal.aborted) return true;
      const seen = JSON.stringify(transfer);
      if (seen !== last) options.onUpdate?.(transfer);
      last = seen;
      if (done(transfer)) finish(undefined, transfer);
      else if (wanted && !wanted.some((status) => REACHABLE[transfer.status].includes(status)))
        finish(new TransferWaitError(transfer, wanted));
      return stop.signal.aborted;
    };
    if (signal.aborted) return finish(signal.reason);
    signal.addEventListener('abort', () => finish(signal.reason), { once: true });

    // Subscribed before the first read, so that no event between the two is missed.
    unsubscribe = options.webhooks?.subscribe((event) => {
      if (event.type === 'ping' || event.data.transfer.id !== transferId) return;
      consider(event.data.transfer);
    });
    const pollMs = options.pollIntervalMs ?? (options.webhooks ? undefined : 2_000);
    (async () => {
      if (consider(await client.getTransfer(transferId, call))) return;
      if (pollMs === undefined) return;
      for (;;) {
        await delay(pollMs, signal);
        if (consider(await client.getTransfer(transferId, call))) return;
      }
    })().catch((error: unknown) => finish(error));
  });
}
