import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import { nextRetry } from '../domain/webhook-retry.ts';
import { DELIVERY_CHANNEL } from '../store/channels.ts';
import type { Db } from '../store/db.ts';
import type { ClaimedDelivery, DeliveryResult, DeliveryStore } from '../store/deliveries.ts';
import { keepListening } from '../store/notifications.ts';
import type { WebhookSender } from '../webhooks/sender.ts';
import { DELIVERY_TIMEOUT_MS, isDelivered, signedPost } from '../webhooks/signed-post.ts';

export interface WebhookDeliveryWorkerOptions {
  db: Pick<Db, 'listen'>;
  deliveries: Pick<DeliveryStore, 'claim' | 'record'>;
  sender: Pick<WebhookSender, 'post'>;
  clock: Clock;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** Deliveries claimed per query. */
  batchSize?: number;
  /** Sends this worker has in flight at most, over all endpoints. */
  maxInFlight?: number;
  /** Requests in flight per endpoint at most, over all workers. */
  perEndpointConcurrency?: number;
  /** Requests in flight at most to an endpoint whose last attempts failed, over all workers. */
  perFailingEndpointConcurrency?: number;
  /** Endpoints served per claim query. */
  endpointsPerClaim?: number;
  /** How long a claim lasts; another worker takes a delivery over when it lapses. */
  leaseMs?: number;
  /** How long a receiver has to answer (decisions: 10 s). */
  timeoutMs?: number;
  /** Fallback polling when no NOTIFY arrives (and the resolution of retry times). */
  pollIntervalMs?: number;
  /** Source of jitter in [0, 1). */
  random?: () => number;
}

/**
 * Delivers webhook events: claims due deliveries from PostgreSQL (several workers never hold one
 * delivery at once), signs and POSTs them concurrently over kept-alive connections, and records
 * every attempt with its retry or final outcome. Wakes on NOTIFY when deliveries are queued and
 * after each batch of results (which may unblock the next event of a transfer); polls as a fallback.
 */
export function createWebhookDeliveryWorker(options: WebhookDeliveryWorkerOptions) {
  const { deliveries, sender, clock, log } = options;
  const batchSize = options.batchSize ?? 100;
  const maxInFlight = options.maxInFlight ?? 500;
  const perEndpoint = options.perEndpointConcurrency ?? 20;
  const perFailingEndpoint = options.perFailingEndpointConcurrency ?? 1;
  const maxEndpoints = options.endpointsPerClaim ?? 50;
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const leaseMs = options.leaseMs ?? 60_000;
  const pollIntervalMs = options.pollIntervalMs ?? 1_000;
  const random = options.random ?? Math.random;
  if (leaseMs <= timeoutMs)
    throw new RangeError('leaseMs must exceed timeoutMs so a claim outlives its request');

  const claim = (limit: number) =>
    deliveries.claim({
      now: clock.now(),
      leaseMs,
      limit,
      perEndpoint,
      perFailingEndpoint,
      maxEndpoints,
    });

  /** Sends one claimed delivery; never throws. */
  async function attempt(delivery: ClaimedDelivery): Promise<DeliveryResult> {
    const attemptedAt = clock.now();
    const result = await signedPost(sender, {
      url: delivery.url,
      secrets: delivery.secrets,
      eventId: delivery.eventId,
      eventType: delivery.eventType,
      body: delivery.body,
      now: attemptedAt,
      timeoutMs,
    });
    const succeeded = isDelivered(result);
    let outcome: DeliveryResult['outcome'] = { kind: 'succeeded' };
    if (!succeeded) {
      const decision = nextRetry({
        attempt: delivery.attempt,
        now: attemptedAt,
        retryUntil: delivery.retryUntil,
        random: random(),
      });
      outcome = decision.kind === 'retry' ? { kind: 'retry', at: decision.at } : { kind: 'failed' };
    }
    return {
      deliveryId: delivery.id,
      leaseToken: delivery.leaseToken,
      endpointId: delivery.endpointId,
      eventId: delivery.eventId,
      eventType: delivery.eventType,
      trigger: delivery.trigger,
      attempt: delivery.attempt,
      attemptedAt,
      succeeded,
      statusCode: result.kind === 'response' ? result.status : null,
      durationMs: result.durationMs,
      error: result.kind === 'failed' ? result.error : null,
      outcome,
    };
  }

  async function record(results: DeliveryResult[]) {
    const disabled = await deliveries.record(results);
    for (const endpointId of disabled) {
      log.warn({ endpointId }, 'webhook endpoint disabled: deliveries failed for 3 days');
    }
  }

  /** Delivers everything due now (that no other worker holds), batch after batch; returns the number of attempts made. */
  async function runOnce(): Promise<number> {
    let attempts = 0;
    for (;;) {
      const claimed = await claim(batchSize);
      if (claimed.length === 0) return attempts;
      await record(await Promise.all(claimed.map((delivery) => attempt(delivery))));
      attempts += claimed.length;
    }
  }

  // State of the continuous loop (start/stop).
  let stopped = true;
  let loop: Promise<void> | undefined;
  const sending = new Set<Promise<void>>();
  const unrecorded: DeliveryResult[] = [];
  let flushing: Promise<void> | undefined;
  let woken = false;
  let wakeUp: (() => void) | undefined;

  function wake() {
    woken = true;
    wakeUp?.();
  }

  async function sleepUntilWoken(ms: number) {
    if (woken || stopped) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      wakeUp = resolve;
      timer = setTimeout(resolve, ms);
    });
    clearTimeout(timer);
    wakeUp = undefined;
  }

  /**
   * Records buffered results, everything that finished meanwhile in one statement; retries while
   * the database is away (once stopped, the leases lapse instead and the deliveries are redone).
   */
  async function drain() {
    while (unrecorded.length > 0) {
      const batch = unrecorded.splice(0);
      try {
        await record(batch);
      } catch (error) {
        log.error({ err: error, results: batch.length }, 'recording webhook attempts failed');
        unrecorded.unshift(...batch);
        if (stopped) return;
        await new Promise((resolve) => setTimeout(resolve, pollIntervalMs));
      }
    }
  }

  function flush(): Promise<void> {
    // Waiting one turn of the event loop lets answers that arrive together share a statement.
    flushing ??= new Promise((resolve) => setImmediate(resolve)).then(drain).finally(() => {
      flushing = undefined;
      if (unrecorded.length > 0 && !stopped) void flush();
      // Results free endpoint slots and may unblock a transfer's next event: claim again.
      wake();
    });
    return flushing;
  }

  async function run() {
    let subscription: { close(): Promise<void> } | undefined;
    try {
      // Resubscribes by itself if the connection breaks; a missed notification only costs a poll.
      subscription = await keepListening(options.db, DELIVERY_CHANNEL, {
        onNotify: wake,
        onReset: wake,
        log,
      });
    } catch (error) {
      log.warn({ err: error }, 'cannot LISTEN for webhook deliveries; polling only');
    }
    try {
      while (!stopped) {
        woken = false;
        const room = Math.min(batchSize, maxInFlight - sending.size);
        let claimed: ClaimedDelivery[] = [];
        if (room > 0) {
          try {
            claimed = await claim(room);
          } catch (error) {
            log.error({ err: error }, 'claiming webhook deliveries failed');
          }
        }
        for (const delivery of claimed) {
          const send: Promise<void> = attempt(delivery)
            .then((result) => {
              unrecorded.push(result);
              void flush();
            })
            // Unreachable with a sender that never throws; if one did, the lease lapses and the delivery is redone.
            .catch((error) => log.error({ err: error, deliveryId: delivery.id }, 'webhook attempt crashed'))
            .finally(() => sending.delete(send));
          sending.add(send);
        }
        // A full batch suggests more is due: claim again at once; otherwise wait for news.
        if (claimed.length < room || room <= 0) await sleepUntilWoken(pollIntervalMs);
      }
    } finally {
      await Promise.all(sending);
      await flushing;
      await flush();
      await subscription?.close();
    }
  }

  return {
    runOnce,
    /** Delivers continuously until stopped. */
    start() {
      if (!stopped) return;
      stopped = false;
      loop = run().catch((error) =>
        log.error({ err: error }, 'webhook delivery worker stopped unexpectedly'),
      );
    },
    /** Stops claiming, waits for requests in flight (at most the timeout) and records their results. */
    async stop() {
      stopped = true;
      wake();
      await loop;
      loop = undefined;
    },
  };
}

export type WebhookDeliveryWorker = ReturnType<typeof createWebhookDeliveryWorker>;
