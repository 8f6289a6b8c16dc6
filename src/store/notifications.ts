import type { Db } from './db.ts';

/**
 * A NOTIFY subscription that heals: when the listening connection breaks it calls `onReset`
 * (notifications may have been missed, so whatever they keep fresh must be dropped) and listens
 * again with backoff, calling `onReset` once more when it is back. `isLive()` says whether
 * notifications are currently flowing, so a cache can bypass itself meanwhile.
 */
export async function keepListening(
  db: Pick<Db, 'listen'>,
  channel: string,
  handlers: {
    onNotify: (payload: string) => void;
    /** Notifications may have been missed; `live` says whether they flow again. */
    onReset: (live: boolean) => void;
    log?: { warn(obj: object, msg: string): void };
  },
  options: { retryMs?: number } = {},
) {
  const retryMs = options.retryMs ?? 1_000;
  let unlisten: (() => Promise<void>) | undefined;
  let live = false;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;

  const onLost = () => {
    if (closed) return;
    live = false;
    unlisten = undefined;
    handlers.onReset(false);
    handlers.log?.warn({ channel }, 'notification connection lost; resubscribing');
    schedule();
  };
  const subscribe = async () => {
    unlisten = await db.listen(channel, handlers.onNotify, onLost);
    live = true;
  };
  function schedule() {
    if (closed) return;
    timer = setTimeout(async () => {
      try {
        await subscribe();
        if (closed) return void (await unlisten?.());
        handlers.onReset(true);
      } catch {
        if (!closed) schedule();
      }
    }, retryMs);
    timer.unref();
  }

  await subscribe();
  return {
    isLive: () => live,
    async close() {
      closed = true;
      clearTimeout(timer);
      live = false;
      await unlisten?.();
    },
  };
}
