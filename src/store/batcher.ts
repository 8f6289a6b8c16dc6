import { isDatabaseUnavailable } from './db.ts';

/**
 * Gathers the calls made within one turn of the event loop and runs them as one batch, so that
 * many concurrent requests share one statement (one round trip, one commit) instead of paying for
 * one each. Each caller gets its own result. When a batch fails, its calls are retried one by one,
 * so one bad input (say, a unique violation) fails only its own caller; when the database is
 * unreachable, they all fail at once.
 */
export function createBatcher<I, O>(options: { maxBatch: number; run: (inputs: I[]) => Promise<O[]> }) {
  type Pending = { input: I; resolve: (output: O) => void; reject: (error: unknown) => void };
  let queue: Pending[] = [];
  let scheduled = false;

  const settle = async (batch: Pending[]) => {
    try {
      const outputs = await options.run(batch.map((pending) => pending.input));
      batch.forEach((pending, index) => {
        pending.resolve(outputs[index]!);
      });
    } catch (error) {
      // One by one only when one input may be at fault: while the database is unreachable, that
      // would multiply the statements sent to it.
      if (batch.length === 1 || isDatabaseUnavailable(error)) {
        for (const pending of batch) pending.reject(error);
        return;
      }
      for (const pending of batch) void settle([pending]);
    }
  };

  const flush = () => {
    scheduled = false;
    const waiting = queue;
    queue = [];
    for (let start = 0; start < waiting.length; start += options.maxBatch) {
      void settle(waiting.slice(start, start + options.maxBatch));
    }
  };

  return (input: I): Promise<O> =>
    new Promise<O>((resolve, reject) => {
      queue.push({ input, resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}
