import type { Db } from './db.ts';
import { keepListening } from './notifications.ts';

/**
 * A per-process cache of database reads kept fresh by PostgreSQL NOTIFY: a change in any process
 * evicts the entries it affects in every process. Entries also expire after `ttlMs`. While the
 * notification connection is down the cache is bypassed and emptied, so it never serves what a
 * missed notification would have evicted. A read that overlapped an eviction is not stored (the
 * epoch check), so a value read just before a change cannot linger after it.
 */
export function createNotifiedCache<K, V>(options: {
  ttlMs: number;
  maxEntries: number;
  now?: () => number;
}) {
  const now = options.now ?? Date.now;
  const entries = new Map<K, { value: V; until: number }>();
  let epoch = 0;
  let live = false;

  return {
    /** The cached value, if fresh. */
    get(key: K): V | undefined {
      if (!live) return undefined;
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.until <= now()) {
        entries.delete(key);
        return undefined;
      }
      return entry.value;
    },
    /** Reads through the cache: `load` runs on a miss and its result is kept unless an eviction overlapped it. */
    async read(
      key: K,
      load: () => Promise<V | null>,
      keep: (value: V) => boolean = () => true,
    ): Promise<V | null> {
      const cached = this.get(key);
      if (cached !== undefined) return cached;
      const started = epoch;
      const value = await load();
      if (value !== null && live && started === epoch && options.ttlMs > 0 && keep(value)) {
        if (entries.size >= options.maxEntries) entries.clear();
        entries.set(key, { value, until: now() + options.ttlMs });
      }
      return value;
    },
    /** Drops one entry (and invalidates reads in flight). */
    evict(key: K) {
      epoch++;
      entries.delete(key);
    },
    /** Drops everything (and invalidates reads in flight). */
    clear() {
      epoch++;
      entries.clear();
    },
    /**
     * Starts following `channel`: `onNotify` maps a notification to the keys to evict (or 'all').
     * Resolves to a stop function.
     */
    async follow(
      db: Pick<Db, 'listen'>,
      channel: string,
      onNotify: (payload: string) => K | 'all',
      log?: { warn(obj: object, msg: string): void },
    ) {
      const subscription = await keepListening(db, channel, {
        onNotify: (payload) => {
          const key = onNotify(payload);
          if (key === 'all') this.clear();
          else this.evict(key);
        },
        onReset: (isLive) => {
          live = isLive;
          this.clear();
        },
        ...(log ? { log } : {}),
      });
      live = subscription.isLive();
      return async () => {
        live = false;
        this.clear();
        await subscription.close();
      };
    },
  };
}

export type NotifiedCache<K, V> = ReturnType<typeof createNotifiedCache<K, V>>;
