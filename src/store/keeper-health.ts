import type { KeyMode } from '../domain/api-keys.ts';
import type { Db } from './db.ts';
import { type Lateness, readLateness, rollUpHopLateness } from './hop-lateness.ts';

/** The routes the keeper has in flight (status `processing`), by what they wait for. */
export interface RoutesInFlight {
  total: number;
  /** Held by a live worker process: a hop in hand. */
  held: number;
  /** Due by the chain's clock, held by no live worker and in no backoff: waiting for a worker to claim it. */
  waiting: number;
  /** Held by no live worker, waiting for the end of a backoff after a transient failure. */
  backingOff: number;
  /** Next step not yet due by the chain's clock. */
  scheduled: number;
}

/** A route whose next step is due by the chain's clock and has not landed. */
export interface DueRoute {
  transferId: number;
  integrationId: number;
  integrationName: string | null;
  mode: KeyMode;
  hops: number;
  hopsCompleted: number;
  /** When the next step fell due (the chain's unix seconds). */
  dueAt: bigint;
  /** Attempts the next hop has had. */
  attempts: number;
  retryAt: Date | null;
  /** The worker process holding it, when one is alive. */
  heldBy: string | null;
}

/** A route that failed and waits for its source to rescue it. */
export interface FailedRoute {
  transferId: number;
  integrationId: number;
  integrationName: string | null;
  mode: KeyMode;
  phase: 'failed' | 'recoverable';
  hops: number;
  hopsCompleted: number;
  lastError: { code: string; message: string; at: Date } | null;
  updatedAt: Date;
}

/** A worker process as `worker_processes` knows it (migration 0013). */
export interface WorkerProcess {
  id: string;
  name: string;
  startedAt: Date;
  seenAt: Date;
  /** Seconds since it last said it was alive, by the database's clock. */
  silentSeconds: number;
  alive: boolean;
  /** Routes it holds now. */
  routes: number;
}

/** The keeper's health as an operator reads it. */
export interface KeeperHealth {
  routes: RoutesInFlight;
  due: DueRoute[];
  lateness: { lastHour: Lateness; lastDay: Lateness };
  failures: { total: number; latest: FailedRoute[] };
  workers: WorkerProcess[];
}

/** What a reading of the keeper's health is taken at: the chain's time, this process's, and how many rows of each list. */
export interface KeeperHealthQuery {
  chainNow: bigint;
  now: Date;
  limit: number;
}

const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;
/**
 * How long the hop lateness roll-up is kept: the longest window and an hour more, so that a process
 * whose clock runs a little behind another's still finds its window whole.
 */
export const HOP_LATENESS_KEPT_MS = DAY_MS + HOUR_MS;

/**
 * The keeper's health for the operator's console, all from the database: the routes in flight and
 * what each waits for, the routes whose next step is due and not landed, the lateness of recent
 * hops (from each hop's due time by the chain's clock to its `transfer.hop_complete` event by the
 * service's, from their per-minute roll-up: src/store/hop-lateness.ts), the routes that failed,
 * and the worker processes.
 */
export function createKeeperHealthStore(db: Db) {
  return {
    /** Reads every figure of the keeper's health. */
    async read(query: KeeperHealthQuery): Promise<KeeperHealth> {
      const now = query.now.getTime();
      const [routes, due, lateness, failures, workers] = await Promise.all([
        routesInFlight(db, query),
        dueRoutes(db, query),
        readLateness(db, { lastHour: new Date(now - HOUR_MS), lastDay: new Date(now - DAY_MS) }),
        failedRoutes(db, query.limit),
        workerProcesses(db, query.limit),
      ]);
      return { routes, due, lateness, failures, workers };
    },
    /** Folds up to `batchSize` recorded hops into the lateness roll-up; answers how many. */
    rollUpLateness: (batchSize: number) => rollUpHopLateness(db, batchSize),
  };
}

export type KeeperHealthStore = ReturnType<typeof createKeeperHealthStore>;

async function routesInFlight(db: Db, query: KeeperHealthQuery): Promise<RoutesInFlight> {
  const { rows } = await db.query<{
    total: number;
    held: number;
    waiting: number;
    backing_off: number;
    scheduled: number;
  }>(
    `SELECT count(*)::int AS total,
            count(*) FILTER (WHERE held)::int AS held,
            count(*) FILTER (WHERE NOT held AND keeper_due_at <= $1
                               AND (keeper_retry_at IS NULL OR keeper_retry_at <= $2))::int AS waiting,
            count(*) FILTER (WHERE NOT held AND keeper_retry_at > $2)::int AS backing_off,
            count(*) FILTER (WHERE NOT held AND keeper_due_at > $1
                               AND (keeper_retry_at IS NULL OR keeper_retry_at <= $2))::int AS scheduled
       FROM (SELECT keeper_due_at, keeper_retry_at,
                    coalesce(keeper_claimed_by IN (SELECT id FROM live_workers), false) AS held
               FROM transfers WHERE status = 'processing') routes`,
    [query.chainNow.toString(), query.now],
  );
  const row = rows[0]!;
  return {
    total: row.total,
    held: row.held,
    waiting: row.waiting,
    backingOff: row.backing_off,
    scheduled: row.scheduled,
  };
}

async function dueRoutes(db: Db, query: KeeperHealthQuery): Promise<DueRoute[]> {
  const { rows } = await db.query<{
    id: string;
    integration_id: string;
    name: string | null;
    mode: KeyMode;
    hops: number;
    hops_completed: number;
    keeper_due_at: string;
    hop_attempts: number;
    keeper_retry_at: Date | null;
    held_by: string | null;
  }>(
    `SELECT t.id, t.integration_id, i.name, t.mode, t.hops, t.hops_completed, t.keeper_due_at,
            t.hop_attempts, t.keeper_retry_at, CASE WHEN l.id IS NULL THEN NULL ELSE w.name END AS held_by
       FROM transfers t
       LEFT JOIN integrations i ON i.id = t.integration_id
       LEFT JOIN live_workers l ON l.id = t.keeper_claimed_by
       LEFT JOIN worker_processes w ON w.id = l.id
      WHERE t.status = 'processing' AND t.keeper_due_at <= $1
      ORDER BY t.keeper_due_at, t.id
      LIMIT $2`,
    [query.chainNow.toString(), query.limit],
  );
  return rows.map((row) => ({
    transferId: Number(row.id),
    integrationId: Number(row.integration_id),
    integrationName: row.name,
    mode: row.mode,
    hops: row.hops,
    hopsCompleted: row.hops_completed,
    dueAt: BigInt(row.keeper_due_at),
    attempts: row.hop_attempts,
    retryAt: row.keeper_retry_at,
    heldBy: row.held_by,
  }));
}

async function failedRoutes(db: Db, limit: number): Promise<KeeperHealth['failures']> {
  const { rows } = await db.query<{
    id: string;
    integration_id: string;
    name: string | null;
    mode: KeyMode;
    phase: 'failed' | 'recoverable';
    hops: number;
    hops_completed: number;
    last_error: { code: string; message: string; at: string } | null;
    updated_at: Date;
    total: number;
  }>(
    `SELECT t.id, t.integration_id, i.name, t.mode, t.phase, t.hops, t.hops_completed, t.last_error,
            t.updated_at, (count(*) OVER ())::int AS total
       FROM transfers t LEFT JOIN integrations i ON i.id = t.integration_id
      WHERE t.phase IN ('failed', 'recoverable')
      ORDER BY t.updated_at DESC, t.id DESC
      LIMIT $1`,
    [limit],
  );
  return {
    total: rows[0]?.total ?? 0,
    latest: rows.map((row) => ({
      transferId: Number(row.id),
      integrationId: Number(row.integration_id),
      integrationName: row.name,
      mode: row.mode,
      phase: row.phase,
      hops: row.hops,
      hopsCompleted: row.hops_completed,
      lastError: row.last_error
        ? { code: row.last_error.code, message: row.last_error.message, at: new Date(row.last_error.at) }
        : null,
      updatedAt: row.updated_at,
    })),
  };
}

async function workerProcesses(db: Db, limit: number): Promise<WorkerProcess[]> {
  const { rows } = await db.query<{
    id: string;
    name: string;
    started_at: Date;
    seen_at: Date;
    silent_seconds: number;
    alive: boolean;
    routes: number;
  }>(
    `SELECT w.id, w.name, w.started_at, w.seen_at,
            extract(epoch FROM clock_timestamp() - w.seen_at)::float8 AS silent_seconds,
            l.id IS NOT NULL AS alive, coalesce(held.routes, 0)::int AS routes
       FROM worker_processes w
       LEFT JOIN live_workers l ON l.id = w.id
       LEFT JOIN (SELECT keeper_claimed_by, count(*) AS routes FROM transfers
                   WHERE status = 'processing' AND keeper_claimed_by IS NOT NULL
                   GROUP BY keeper_claimed_by) held ON held.keeper_claimed_by = w.id
      ORDER BY l.id IS NOT NULL DESC, w.seen_at DESC
      LIMIT $1`,
    [limit],
  );
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    startedAt: row.started_at,
    seenAt: row.seen_at,
    silentSeconds: Math.max(0, row.silent_seconds),
    alive: row.alive,
    routes: row.routes,
  }));
}
