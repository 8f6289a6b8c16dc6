/** A worker that runs one round every so often, one round at a time. */
export interface PeriodicWorker<T> {
  runOnce(): Promise<T>;
  /** Runs a round after `firstDelayMs` (default `intervalMs`), then every `intervalMs`, until stopped. */
  start(): void;
  /** Stops and waits for a round in progress. */
  stop(): Promise<void>;
}

/**
 * Runs `runOnce` every `intervalMs` after the previous round ended (rounds never overlap). A round
 * that throws is reported to `onError` and the next one runs as planned.
 */
export function runPeriodically<T>(options: {
  runOnce: () => Promise<T>;
  intervalMs: number;
  firstDelayMs?: number;
  onError: (error: unknown) => void;
}): PeriodicWorker<T> {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = true;

  function schedule(delayMs: number) {
    if (stopped) return;
    timer = setTimeout(async () => {
      running = options.runOnce().catch(options.onError);
      await running;
      running = undefined;
      schedule(options.intervalMs);
    }, delayMs);
  }

  return {
    runOnce: options.runOnce,
    start() {
      stopped = false;
      schedule(options.firstDelayMs ?? options.intervalMs);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

/**
 * One round of a worker that claims its work: claims batches of up to `batchSize` until one comes
 * back short, hands each item to `handle`, and answers how many it claimed. An item that fails is
 * reported to `onItemError` and stays claimed until its claim lapses, when a later round (of this
 * process or another) tries it again.
 */
export async function drainClaims<T>(options: {
  claim: () => Promise<T[]>;
  batchSize: number;
  handle: (item: T) => Promise<void>;
  onItemError: (item: T, error: unknown) => void;
}): Promise<number> {
  let total = 0;
  for (;;) {
    const claimed = await options.claim();
    for (const item of claimed) {
      try {
        await options.handle(item);
      } catch (error) {
        options.onItemError(item, error);
      }
    }
    total += claimed.length;
    if (claimed.length < options.batchSize) return total;
  }
}
