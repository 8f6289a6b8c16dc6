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
