import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import { Counter, Histogram, type Registry } from 'prom-client';
import { withCoalescedReads } from '../chain/coalesced-reads.ts';
import { hopRetryDelayMs } from '../domain/route.ts';
import { KEEPER_CHANNEL } from '../store/channels.ts';
import type { Db } from '../store/db.ts';
import type { ClaimedRoute } from '../store/hops.ts';
import { keepListening } from '../store/notifications.ts';
import { advanceRoute, type KeeperDeps, type KeeperEvent } from '../use-cases/advance-hop.ts';
import { createWakeSignal } from './wake-signal.ts';

/** Prometheus metrics of the keeper: hops landed, retried and failed, lateness, keepers short of lamports. */
export function keeperMetrics(registry: Registry) {
  const hops = new Counter({
    name: 'keeper_hops_total',
    help: 'Hops the keeper executed (landed), retried after a transient failure, or gave up on.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const lateness = new Histogram({
    name: 'keeper_hop_lateness_seconds',
    help: 'How long after its due time (chain clock) a hop landed.',
    buckets: [0, 1, 2, 5, 10, 30, 60, 300, 3600],
    registers: [registry],
  });
  const low = new Counter({
    name: 'keeper_low_balance_total',
    help: 'Times a route’s keeper held less than its remaining hops’ fees.',
    registers: [registry],
  });
  return (event: KeeperEvent) => {
    switch (event.kind) {
      case 'hop_landed':
        hops.inc({ outcome: 'landed' });
        lateness.observe(Math.max(0, event.lateSeconds));
        return;
      case 'hop_retried':
        hops.inc({ outcome: 'retried' });
        return;
      case 'route_failed':
        hops.inc({ outcome: 'failed' });
        return;
      case 'keeper_low':
        low.inc();
        return;
    }
  };
}

/** One log line per keeper action, each with the transfer's id. */
function logKeeperEvent(log: Pick<Logger, 'debug' | 'info' | 'warn'>, event: KeeperEvent) {
  switch (event.kind) {
    case 'route_screened':
      if (event.outcome === 'flagged') log.warn({ ...event }, 'route flagged by screening');
      else log.info({ ...event }, 'route screened');
      return;
    case 'hop_sent':
      log.debug({ ...event }, 'hop sent');
      return;
    case 'hop_landed':
      log.info({ ...event }, event.settled ? 'hop landed; transfer completed' : 'hop landed');
      return;
    case 'hop_retried':
      log.info({ ...event }, 'hop retried');
      return;
    case 'route_failed':
      log.warn({ ...event }, 'route failed');
      return;
    case 'keeper_low':
      log.warn({ ...event, lamports: String(event.lamports) }, 'keeper running low');
      return;
  }
}

type KeeperWorkerDeps = Omit<KeeperDeps, 'observe'> & {
  listen: Pick<Db, 'listen'>;
  log: Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;
  metrics?: Registry;
  /** This worker process (src/store/worker-processes.ts): its claims hold while it is alive. */
  worker: string;
  /**
   * Routes advanced at once (default 128): on a cluster a hop is in hand a second or two, most of
   * it waiting for `confirmed`, so 100 hops due a second need some 200 in flight.
   */
  concurrency?: number;
  /**
   * Longest sleep, so a clock that jumps without a word (time travel on a local chain in another
   * process) is noticed.
   */
  maxSleepMs?: number;
  /**
   * Subscribes to the chain's clock jumps where they are announced (the embedded chain's time
   * travel): the keeper then looks for due steps at once rather than at its next look.
   */
  onClockJump?: (listener: () => void) => () => void;
};

/**
 * The keeper network's worker: claims routes whose next step is due on the chain's clock (several
 * workers share them; a dead worker's claims are free again seconds later), advances up to
 * `concurrency` of them at a time (src/use-cases/advance-hop.ts), claiming more as slots free up, and sleeps
 * until the next step falls due or a route is taken over (NOTIFY), never polling faster than it
 * must.
 */
export function createKeeperWorker(deps: KeeperWorkerDeps) {
  const concurrency = deps.concurrency ?? 128;
  const maxSleepMs = deps.maxSleepMs ?? 5_000;
  const record = deps.metrics ? keeperMetrics(deps.metrics) : undefined;
  const observe = (event: KeeperEvent) => {
    record?.(event);
    logKeeperEvent(deps.log, event);
  };
  // Many routes land at once: their status and block height reads share calls to the node.
  const keeper = { ...deps, chain: withCoalescedReads(deps.chain), observe };
  let stopped = true;
  let running: Promise<void> | undefined;
  const signal = createWakeSignal();

  /**
   * Advances the routes due now, `concurrency` at a time, claiming more once a batch of slots is
   * free, until a claim finds fewer than it asked for; answers how many it advanced.
   */
  const runOnce = (): Promise<number> => advanceDueRoutes(keeper, { concurrency, maxSleepMs });

  async function loop() {
    const subscription = await keepListening(deps.listen, KEEPER_CHANNEL, {
      onNotify: signal.wake,
      onReset: signal.wake,
      log: deps.log,
    });
    const unsubscribe = deps.onClockJump?.(signal.wake);
    try {
      while (!stopped) {
        try {
          await runOnce();
          // News from the round shows in the next due time, read next: only a wake from now on
          // counts, a clock jump while it is read included.
          signal.reset();
          const ms = await untilNextWork(deps, maxSleepMs);
          if (stopped) break;
          await signal.sleep(ms);
        } catch (error) {
          deps.log.error({ err: error }, 'keeper round failed');
          await new Promise((resolve) => setTimeout(resolve, maxSleepMs));
        }
      }
    } finally {
      unsubscribe?.();
      await subscription.close();
    }
  }

  return {
    runOnce,
    /** Runs until stopped. */
    start() {
      stopped = false;
      running = loop();
    },
    /** Stops after the routes in hand are advanced. */
    async stop() {
      stopped = true;
      signal.wake();
      await running;
    },
  };
}

/**
 * See the worker's `runOnce`. While routes are in hand the worker keeps looking for others that
 * fall due (at their due time on the chain's clock, or every `maxSleepMs`), so one hop slow to
 * land (a dropped transaction waits out its blockhash) never holds back another route.
 */
async function advanceDueRoutes(
  keeper: KeeperDeps & Pick<KeeperWorkerDeps, 'log' | 'worker'>,
  { concurrency, maxSleepMs }: { concurrency: number; maxSleepMs: number },
): Promise<number> {
  let total = 0;
  let more = true;
  // Claims come in batches: one claim per route costs as much again. A batch of half the slots,
  // at most CLAIM_BATCH routes, so a hop falling due while many are in flight waits for few.
  const batch = Math.min(CLAIM_BATCH, Math.ceil(concurrency / 2));
  const inFlight = new Set<Promise<void>>();
  // Wakes the round when the next route falls due; cancelled when the round ends.
  const cancel = new AbortController();
  let due: Promise<'due'> | undefined;
  try {
    for (;;) {
      const free = concurrency - inFlight.size;
      if (more && free >= batch) {
        const chainNow = (await keeper.chain.getClock()).unixTimestamp;
        const claimed = await keeper.hops.claimDue({
          chainNow,
          now: keeper.clock.now(),
          worker: keeper.worker,
          limit: free,
        });
        more = claimed.length === free;
        total += claimed.length;
        for (const route of claimed) {
          const advancing: Promise<void> = advance(keeper, route).finally(() => inFlight.delete(advancing));
          inFlight.add(advancing);
        }
      }
      if (inFlight.size === 0) return total;
      // After a short claim nothing else was due: wake when something falls due, if a claim
      // could follow (a batch of slots free); a full claim looks again as soon as slots free up.
      if (!more && concurrency - inFlight.size >= batch) {
        due ??= untilNextWork(keeper, maxSleepMs).then((ms) =>
          delay(ms, 'due' as const, { signal: cancel.signal }),
        );
      }
      const waits: Promise<unknown>[] = due ? [...inFlight, due] : [...inFlight];
      if ((await Promise.race(waits)) === 'due') {
        due = undefined;
        more = true;
      }
    }
  } catch (error) {
    // A failed claim or clock read ends the round, but not before the routes in hand are done:
    // the next round must not take more than `concurrency`, nor a stop leave them running.
    await Promise.allSettled(inFlight);
    throw error;
  } finally {
    cancel.abort();
    due?.catch(() => {});
  }
}

/** Advances a claimed route; a failure gives it back to be retried after a backoff. */
async function advance(
  keeper: KeeperDeps & Pick<KeeperWorkerDeps, 'log'>,
  route: ClaimedRoute,
): Promise<void> {
  try {
    await advanceRoute(keeper, route);
  } catch (error) {
    keeper.log.warn(
      { err: error, transferId: route.transfer.id },
      'advancing a route failed; retrying later',
    );
    keeper.observe?.({
      kind: 'hop_retried',
      transferId: route.transfer.id,
      step: route.transfer.hopsCompleted,
      reason: String(error),
    });
    const random = keeper.random ?? Math.random;
    await keeper.hops
      .release(route.transfer.id, route.claim, {
        retryAt: new Date(keeper.clock.now().getTime() + hopRetryDelayMs(route.hopAttempts, random())),
        attempts: route.hopAttempts + 1,
      })
      .catch(() => {});
  }
}

/** Most routes a claim waits for free slots to take at once. */
const CLAIM_BATCH = 16;

/** How often the chain's clock is read while a step falls due within the second (it shows whole seconds). */
const DUE_POLL_MS = 200;

/**
 * How long until the keeper next has work: a step falling due by the chain's clock, a backoff
 * ending by the service's, or a worker holding routes being counted dead; at most `maxSleepMs`, so
 * a clock that jumps is noticed. The chain's clock shows whole seconds and may tick at any moment
 * of the one it shows: the keeper sleeps until the earliest moment a step may fall due, then
 * reads the clock every {@link DUE_POLL_MS}, so a hop is sent within a few hundred milliseconds
 * of its due time.
 */
async function untilNextWork(
  keeper: Pick<KeeperDeps, 'hops' | 'chain' | 'clock'> & Pick<KeeperWorkerDeps, 'worker'>,
  maxSleepMs: number,
): Promise<number> {
  const now = keeper.clock.now();
  const [next, clock] = await Promise.all([
    keeper.hops.nextWork(now, keeper.worker),
    keeper.chain.getClock(),
  ]);
  const waits = [maxSleepMs];
  if (next.dueAt !== null) {
    const seconds = Number(next.dueAt - clock.unixTimestamp);
    waits.push(seconds > 1 ? (seconds - 1) * 1000 : seconds > 0 ? DUE_POLL_MS : 0);
  }
  if (next.retryAt !== null) waits.push(next.retryAt.getTime() - now.getTime());
  if (next.heldMs !== null) waits.push(next.heldMs);
  return Math.max(50, Math.min(...waits));
}
