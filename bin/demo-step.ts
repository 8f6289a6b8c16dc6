import { createInterface } from 'node:readline';

/**
 * What `--step` waits for: a line of the demo's input (Enter) before each move of the chain's
 * clock, so that a person can watch each hop land in the console at their own pace. Lines typed
 * ahead count for the next waits; once the input ends (closed, or /dev/null) nothing is waited for.
 */
export function createSteps(input: NodeJS.ReadableStream) {
  const lines = createInterface({ input, terminal: false })[Symbol.asyncIterator]();
  return {
    /** Resolves at the input's next line or its end, or once `signal` aborts (nothing left to step). */
    async next(signal: AbortSignal): Promise<void> {
      if (signal.aborted) return;
      const aborted = new Promise<void>((resolve) =>
        signal.addEventListener('abort', () => resolve(), { once: true }),
      );
      await Promise.race([lines.next(), aborted]);
    },
  };
}
