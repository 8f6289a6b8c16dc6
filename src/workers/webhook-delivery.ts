import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import { nextRetry } from '../domain/webhook-retry.ts';
import { DELIVERY_CHANNEL } from '../store/channels.ts';
import type { Db } from '../store/db.ts';
import type { ClaimedDelivery, DeliveryResult, DeliveryStore } from '../store/deliveries.ts';
import { keepListening } from '../store/notifications.ts';
import type { WebhookSender } from '../webhooks/sender.ts';
import { attemptOutcome, DELIVERY_TIMEOUT_MS, signedPost } from '../webhooks/signed-post.ts';
import { createWakeSignal } from './wake-signal.ts';

export interface WebhookDeliveryWorkerOptions {
  db: Pick<Db, 'listen'>;
  deliveries: Pick<DeliveryStore, 'claim' | 'record'>;
  sender: Pick<WebhookSender, 'post'>;
  clock: Clock;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** This worker process (src/store/worker-processes.ts): its claims hold while it is alive. */
  worker: string;
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
  const settings = deliverySettings(options);
  const { deliveries, clock, log } = options;

  const claim = (limit: number) =>
    deliveries.claim({
      now: clock.now(),
      worker: options.worker,
      limit,
      perEndpoint: settings.perEndpoint,
      perFailingEndpoint: settings.perFailingEndpoint,
      maxEndpoints: settings.maxEndpoints,
    });

  const attempt = (delivery: ClaimedDelivery) => attemptDelivery(options, settings, delivery);

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
      const claimed = await claim(settings.batchSize);
      if (claimed.length === 0) return attempts;
      await record(await Promise.all(claimed.map((delivery) => attempt(delivery))));
      attempts += claimed.length;
    }
  }

  return { runOnce, ...createDeliveryLoop({ options, settings, claim, attempt, record }) };
}

export type WebhookDeliveryWorker = ReturnType<typeof createWebhookDeliveryWorker>;

/** The worker's options with their defaults. */
function deliverySettings(options: WebhookDeliveryWorkerOptions) {
  return {
    batchSize: options.batchSize ?? 100,
    maxInFlight: options.maxInFlight ?? 500,
    perEndpoint: options.perEndpointConcurrency ?? 20,
    perFailingEndpoint: options.perFailingEndpointConcurrency ?? 1,
    maxEndpoints: options.endpointsPerClaim ?? 50,
    timeoutMs: options.timeoutMs ?? DELIVERY_TIMEOUT_MS,
    pollIntervalMs: options.pollIntervalMs ?? 1_000,
    random: options.random ?? Math.random,
  };
}

type DeliverySettings = ReturnType<typeof deliverySettings>;

/** Sends one claimed delivery and decides what follows it (done, a retry, or failed); never throws. */
async function attemptDelivery(
  { sender, clock }: WebhookDeliveryWorkerOptions,
  { timeoutMs, random }: DeliverySettings,
  delivery: ClaimedDelivery,
): Promise<DeliveryResult> {
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
  const logged = attemptOutcome(result);
  let outcome: DeliveryResult['outcome'] = { kind: 'succeeded' };
  if (!logged.succeeded) {
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
    ...logged,
    outcome,
  };
}

/**
 * The continuous loop (start/stop): claims as many deliveries as there is room in flight for,
 * sends them concurrently, records their results as they arrive, and waits for news (a NOTIFY,
 * recorded results) or the poll interval whenever a claim comes back short.
 */
function createDeliveryLoop(deps: {
  options: WebhookDeliveryWorkerOptions;
  settings: DeliverySettings;
  claim: (limit: number) => Promise<ClaimedDelivery[]>;
  attempt: (delivery: ClaimedDelivery) => Promise<DeliveryResult>;
  record: (results: DeliveryResult[]) => Promise<void>;
}) {
  const { options, settings } = deps;
  const { log } = options;
  let stopped = true;
  let loop: Promise<void> | undefined;
  const signal = createWakeSignal();
  const sending = new Set<Promise<void>>();
  const recorder = createResultRecorder({
    record: deps.record,
    log,
    retryMs: settings.pollIntervalMs,
    isStopped: () => stopped,
    // Results free endpoint slots and may unblock a transfer's next event: claim again.
    onRecorded: signal.wake,
  });

  /** Sends a delivery in the background; its result goes to the recorder. */
  function send(delivery: ClaimedDelivery) {
    const sent: Promise<void> = deps
      .attempt(delivery)
      .then(recorder.add)
      // Unreachable with a sender that never throws; if one did, the claim ends with this process and the delivery is redone.
      .catch((error) => log.error({ err: error, deliveryId: delivery.id }, 'webhook attempt crashed'))
      .finally(() => sending.delete(sent));
    sending.add(sent);
  }

  /** Claims what there is room in flight for and sends it; answers whether the claim came back full. */
  async function claimAndSend(): Promise<boolean> {
    const room = Math.min(settings.batchSize, settings.maxInFlight - sending.size);
    if (room <= 0) return false;
    let claimed: ClaimedDelivery[] = [];
    try {
      claimed = await deps.claim(room);
    } catch (error) {
      log.error({ err: error }, 'claiming webhook deliveries failed');
    }
    for (const delivery of claimed) send(delivery);
    return claimed.length >= room;
  }

  async function run() {
    const subscription = await subscribe(options, signal.wake);
    try {
      while (!stopped) {
        signal.reset();
        // A full batch suggests more is due: claim again at once; otherwise wait for news.
        if (!(await claimAndSend())) await signal.sleep(settings.pollIntervalMs);
      }
    } finally {
      await Promise.all(sending);
      await recorder.settle();
      await subscription?.close();
    }
  }

  return {
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
      signal.wake();
      await loop;
      loop = undefined;
    },
  };
}

/** LISTENs for queued deliveries; undefined when it cannot, and the worker only polls. */
async function subscribe(options: WebhookDeliveryWorkerOptions, onNews: () => void) {
  try {
    // Resubscribes by itself if the connection breaks; a missed notification only costs a poll.
    return await keepListening(options.db, DELIVERY_CHANNEL, {
      onNotify: onNews,
      onReset: onNews,
      log: options.log,
    });
  } catch (error) {
    options.log.warn({ err: error }, 'cannot LISTEN for webhook deliveries; polling only');
    return undefined;
  }
}

/**
 * Buffers the results of finished sends and records them, everything that finished meanwhile in
 * one statement; retries while the database is away (once stopped, the claims end with the
 * process and the deliveries are redone).
 */
function createResultRecorder(deps: {
  record: (results: DeliveryResult[]) => Promise<void>;
  log: WebhookDeliveryWorkerOptions['log'];
  /** How long to wait before retrying a failed recording. */
  retryMs: number;
  isStopped: () => boolean;
  /** Called after each recording. */
  onRecorded: () => void;
}) {
  const unrecorded: DeliveryResult[] = [];
  let flushing: Promise<void> | undefined;

  async function drain() {
    while (unrecorded.length > 0) {
      const batch = unrecorded.splice(0);
      try {
        await deps.record(batch);
      } catch (error) {
        deps.log.error({ err: error, results: batch.length }, 'recording webhook attempts failed');
        unrecorded.unshift(...batch);
        if (deps.isStopped()) return;
        await new Promise((resolve) => setTimeout(resolve, deps.retryMs));
      }
    }
  }

  function flush(): Promise<void> {
    // Waiting one turn of the event loop lets answers that arrive together share a statement.
    flushing ??= new Promise((resolve) => setImmediate(resolve)).then(drain).finally(() => {
      flushing = undefined;
      if (unrecorded.length > 0 && !deps.isStopped()) void flush();
      deps.onRecorded();
    });
    return flushing;
  }

  return {
    /** Buffers a result, to be recorded with those that arrive meanwhile. */
    add(result: DeliveryResult) {
      unrecorded.push(result);
      void flush();
    },
    /** Waits for the recording under way, then records what is still buffered. */
    async settle() {
      await flushing;
      await flush();
    },
  };
}
