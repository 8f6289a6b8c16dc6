/**
 * What a worker sleeps on between rounds: a timeout that `wake` cuts short (a NOTIFY, new results,
 * `stop`). A wake that comes while the worker is busy is kept until `reset`: the next sleep then
 * returns at once, so news that arrived during a round is not slept through.
 */
export function createWakeSignal() {
  let woken = false;
  let wakeUp: (() => void) | undefined;
  return {
    wake() {
      woken = true;
      wakeUp?.();
    },
    /** Forgets the wakes so far: only later ones cut the next sleep short. */
    reset() {
      woken = false;
    },
    /** Waits `ms`, or until woken; returns at once if woken since the last reset. */
    async sleep(ms: number) {
      if (woken) return;
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        wakeUp = resolve;
        timer = setTimeout(resolve, ms);
      });
      clearTimeout(timer);
      wakeUp = undefined;
    },
  };
}
