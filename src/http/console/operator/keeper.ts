import type { FastifyInstance } from 'fastify';
import type { ClockReader } from '../../../chain/types.ts';
import type { Clock } from '../../../domain/clock.ts';
import type { Lateness } from '../../../store/hop-lateness.ts';
import type { KeeperHealth, KeeperHealthStore } from '../../../store/keeper-health.ts';
import { contentVersion, isRefresh, isUnchanged, refreshUrl } from '../live.ts';
import { duration, errorMeaning, utc } from '../present.ts';
import { operatorPageData } from './layout.ts';

/** How many rows each list of the page shows at most. */
const LIST_LIMIT = 20;
/** How long the page waits for the chain's clock before using the service's. */
const CLOCK_DEADLINE_MS = 3_000;

/** Seconds of lateness to a tenth: `0.4 s`, `12.0 s`, `3 min 5 s` past a minute. */
function seconds(value: number | null): string {
  if (value === null) return '—';
  const sign = value < 0 ? '−' : '';
  const size = Math.abs(value);
  return size < 60 ? `${sign}${size.toFixed(1)} s` : `${sign}${duration(size)}`;
}

function latenessRow(window: string, figures: Lateness) {
  return {
    window,
    hops: figures.hops,
    p50: seconds(figures.p50),
    p99: seconds(figures.p99),
    max: seconds(figures.max),
  };
}

/** The keeper's health in words: what a template only prints. */
function present(health: KeeperHealth, chainNow: bigint) {
  const at = (unix: bigint) => new Date(Number(unix) * 1000);
  return {
    routes: health.routes,
    due: health.due.map((route) => ({
      id: route.transferId,
      integration: route.integrationName ?? `integration ${route.integrationId}`,
      mode: route.mode,
      hop: `${route.hopsCompleted + 1} of ${route.hops}`,
      dueAt: utc(at(route.dueAt)),
      overdue: duration(Number(chainNow - route.dueAt)),
      attempts: route.attempts,
      retryAt: route.retryAt ? utc(route.retryAt) : null,
      heldBy: route.heldBy,
    })),
    lateness: [
      latenessRow('Last hour', health.lateness.lastHour),
      latenessRow('Last 24 hours', health.lateness.lastDay),
    ],
    failures: {
      total: health.failures.total,
      latest: health.failures.latest.map((route) => ({
        id: route.transferId,
        integration: route.integrationName ?? `integration ${route.integrationId}`,
        mode: route.mode,
        phase: route.phase,
        progress: `${route.hopsCompleted} of ${route.hops}`,
        error: route.lastError
          ? {
              code: route.lastError.code,
              meaning: errorMeaning(route.lastError.code),
              message: route.lastError.message,
              at: utc(route.lastError.at),
            }
          : null,
        updated: utc(route.updatedAt),
      })),
    },
    workers: health.workers.map((worker) => ({
      name: worker.name,
      alive: worker.alive,
      started: utc(worker.startedAt),
      seen: utc(worker.seenAt),
      silent: worker.alive ? null : duration(worker.silentSeconds),
      routes: worker.routes,
    })),
    aliveWorkers: health.workers.filter((worker) => worker.alive).length,
  };
}

/**
 * `GET /dashboard/operator/keeper`: the keeper's health from the database (src/store/
 * keeper-health.ts) on the chain's clock: routes in flight, hops due and not landed, the lateness
 * of recent hops, routes that failed and the worker processes. htmx asks the same URL every 5 s for
 * the live part alone (src/http/console/live.ts).
 */
export async function keeperPage(
  app: FastifyInstance,
  deps: { keeperHealth: KeeperHealthStore; chain: ClockReader; clock: Clock },
) {
  app.get('/keeper', async (request, reply) => {
    const now = deps.clock.now();
    let chainNow: bigint;
    let chainClock = true;
    try {
      chainNow = (await deps.chain.getClock({ signal: AbortSignal.timeout(CLOCK_DEADLINE_MS) }))
        .unixTimestamp;
    } catch (error) {
      request.log.warn({ err: error }, 'console: the chain’s clock could not be read');
      chainNow = BigInt(Math.floor(now.getTime() / 1000));
      chainClock = false;
    }
    const health = await deps.keeperHealth.read({ chainNow, now, limit: LIST_LIMIT });
    const shown = {
      ...present(health, chainNow),
      chainClock,
      chainTime: utc(new Date(Number(chainNow) * 1000)),
    };
    const version = contentVersion(shown);
    reply.header('vary', 'hx-request');
    if (isUnchanged(request, version)) return reply.code(204).send();
    const data = { title: 'Keeper', ...shown, refreshUrl: refreshUrl(request, version) };
    if (isRefresh(request)) return reply.view('operator/keeper-live', data);
    return reply.view('operator/keeper', operatorPageData(true, { ...data, live: true }, 'keeper'));
  });
}
