import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import LocalStore from '@fastify/rate-limit/store/LocalStore.js';
import type { Redis } from 'ioredis';

/**
 * Counter stores for @fastify/rate-limit. Neither answers synchronously: answering at once keeps a
 * whole request's processing inside its socket's read callback, while letting the loop turn first
 * lets a burst of requests be read before any is handled — measured at about 50% more throughput
 * (bench/api.ts). The in-process store defers its answers to the next turn; the Redis store's
 * answers come after a round trip, or are deferred the same way when they need none.
 */

type Callback = Parameters<FastifyRateLimitStore['incr']>[1];
type Answer = Parameters<Callback>[1];

// One immediate for all the answers of a turn, rather than one per request.
let answers: [Callback, Error | null, Answer | undefined][] = [];
function answerNextTurn(callback: Callback, error: Error | null, answer?: Answer) {
  if (answers.length === 0) setImmediate(answerAll);
  answers.push([callback, error, answer]);
}
function answerAll() {
  const due = answers;
  answers = [];
  for (const [callback, error, answer] of due) callback(error, answer as Answer);
}

function deferred(inner: FastifyRateLimitStore): FastifyRateLimitStore {
  return {
    incr: (key, callback, timeWindow, max) =>
      inner.incr(key, (error, answer) => answerNextTurn(callback, error, answer), timeWindow, max),
    child: (routeOptions) => deferred(inner.child(routeOptions)),
  };
}

/** The plugin's own in-process store (an LRU of counters), deferred. */
export const InProcessStore = function (this: unknown, options: { cache?: number }) {
  return deferred(new LocalStore(false, false, options.cache));
} as unknown as FastifyRateLimitStoreCtor;

/**
 * Adds a batch of hits to a fixed-window counter and, when asked, reserves further positions for
 * the caller to hand out itself: never more than 1% of the limit, nor more than an eighth of what
 * is left in the window, so that what one process holds unused is small and shrinks to nothing as
 * the window fills. Returns the count after the hits, the window's remaining time and the
 * positions reserved.
 */
const INCREMENT_SCRIPT = `
local current = redis.call('INCRBY', KEYS[1], ARGV[2])
local wanted = tonumber(ARGV[3])
local reserved = 0
if wanted > 0 then
  local max = tonumber(ARGV[4])
  reserved = math.min(wanted, math.floor(max / 100), math.floor((max - current) / 8))
  if reserved > 0 then redis.call('INCRBY', KEYS[1], reserved) else reserved = 0 end
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {current, ttl, reserved}`;

type IncrementCommand = (
  key: string,
  windowMs: number,
  hits: number,
  wanted: number,
  max: number,
) => Promise<[number, number, number]>;

/** Rate sampling for reservations: hits are counted in buckets of this length... */
const BUCKET_MS = 100;
/** ...and a reservation covers about this much of the key's recent traffic. */
const RESERVE_AHEAD_MS = 50;
const SWEEP_EVERY_MS = 10_000;

/** Positions of a window reserved in Redis and not yet handed out: next..last. */
interface Reservation {
  next: number;
  last: number;
  /**
   * The window's end on this process's monotonic clock, measured from when the increment was
   * sent, so never later than Redis's own.
   */
  endsAt: number;
}

interface KeyState {
  reservations: Reservation[];
  pending: Callback[];
  /** Increments sent and not yet answered. */
  inFlight: number;
  /** Whether one of them asked for a reservation: one at a time, so that they cannot pile up. */
  reserving: boolean;
  windowMs: number;
  max: number;
  bucketStart: number;
  bucketHits: number;
  previousBucketHits: number;
}

/**
 * Fixed-window counters in Redis, shared by every process. Hand-written rather than the plugin's
 * Redis store because that one sends a command per request. Here the hits on one key within one
 * turn of the event loop travel as a single INCRBY, and a key busy enough to matter (over about
 * 20 requests per second in this process) also reserves the positions its next 50 ms of traffic
 * will need, so most of its requests are answered without waiting for Redis. Every request still
 * gets a position of its own in the window, so no more than the limit is admitted (short of Redis
 * losing the counter mid-window); the inexactness is that positions a process reserved and did not
 * use (at most 1% of the limit per process and key) count as used until the window ends.
 */
export function createRedisStore(redis: Redis, namespace: string): FastifyRateLimitStoreCtor {
  if (!('trIncrementWindow' in redis)) {
    redis.defineCommand('trIncrementWindow', { numberOfKeys: 1, lua: INCREMENT_SCRIPT });
  }
  const increment = (redis as unknown as { trIncrementWindow: IncrementCommand }).trIncrementWindow.bind(
    redis,
  );

  function store(prefix: string): FastifyRateLimitStore {
    const keys = new Map<string, KeyState>();
    const waiting = new Set<string>();
    let lastSweep = performance.now();

    const flush = () => {
      const now = performance.now();
      for (const key of waiting) {
        const state = keys.get(key)!;
        const callbacks = state.pending;
        state.pending = [];
        const wanted = state.reserving ? 0 : reservationWanted(state, now);
        state.inFlight++;
        state.reserving ||= wanted > 0;
        const settled = () => {
          state.inFlight--;
          if (wanted > 0) state.reserving = false;
        };
        increment(`${prefix}${key}`, state.windowMs, callbacks.length, wanted, state.max).then(
          ([total, ttl, reserved]) => {
            settled();
            const first = Number(total) - callbacks.length + 1;
            for (const [index, callback] of callbacks.entries()) {
              callback(null, { current: first + index, ttl: Number(ttl) });
            }
            if (Number(reserved) > 0) {
              state.reservations.push({
                next: Number(total) + 1,
                last: Number(total) + Number(reserved),
                endsAt: now + Number(ttl),
              });
            }
          },
          (error: Error) => {
            settled();
            for (const callback of callbacks) callback(error);
          },
        );
      }
      waiting.clear();
      if (now - lastSweep > SWEEP_EVERY_MS) {
        lastSweep = now;
        for (const [key, state] of keys) {
          if (state.inFlight === 0 && now - state.bucketStart > SWEEP_EVERY_MS) keys.delete(key);
        }
      }
    };

    return {
      incr(key, callback, timeWindow, max) {
        const now = performance.now();
        let state = keys.get(key);
        if (!state) {
          state = {
            reservations: [],
            pending: [],
            inFlight: 0,
            reserving: false,
            windowMs: timeWindow,
            max,
            bucketStart: now,
            bucketHits: 0,
            previousBucketHits: 0,
          };
          keys.set(key, state);
        }
        const bucketsPassed = Math.floor((now - state.bucketStart) / BUCKET_MS);
        if (bucketsPassed > 0) {
          state.previousBucketHits = bucketsPassed === 1 ? state.bucketHits : 0;
          state.bucketStart += bucketsPassed * BUCKET_MS;
          state.bucketHits = 0;
        }
        state.bucketHits++;

        const position = takeReserved(state.reservations, now);
        if (position !== undefined) {
          answerNextTurn(callback, null, { current: position.current, ttl: position.ttl });
          return;
        }
        state.windowMs = timeWindow;
        state.max = max;
        state.pending.push(callback);
        if (waiting.size === 0) setImmediate(flush);
        waiting.add(key);
      },
      child: (routeOptions) => {
        const route = (routeOptions as unknown as { routeInfo: { method: string; url: string } }).routeInfo;
        return store(`${prefix}${route.method}${route.url}-`);
      },
    };
  }

  return function RedisStore(this: unknown) {
    return store(namespace);
  } as unknown as FastifyRateLimitStoreCtor;
}

/**
 * How many positions to ask for: the key's traffic of the last 100 ms scaled to 50 ms, less what
 * is still held, so that no more than 1% of the limit is held at once. Redis caps the answer again
 * against the window's real count.
 */
function reservationWanted(state: KeyState, now: number) {
  let held = 0;
  for (const reservation of state.reservations) {
    if (now < reservation.endsAt) held += reservation.last - reservation.next + 1;
  }
  const target = Math.min(
    Math.floor((state.previousBucketHits * RESERVE_AHEAD_MS) / BUCKET_MS),
    Math.floor(state.max / 100),
  );
  return Math.max(0, target - held);
}

/** Hands out the next reserved position of a window that has not ended, dropping spent ones. */
function takeReserved(reservations: Reservation[], now: number) {
  while (reservations.length > 0) {
    const reservation = reservations[0]!;
    if (reservation.next <= reservation.last && now < reservation.endsAt) {
      return { current: reservation.next++, ttl: reservation.endsAt - now };
    }
    reservations.shift();
  }
  return undefined;
}
