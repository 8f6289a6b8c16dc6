import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Db } from './db.ts';

/**
 * How often a worker process says it is alive. The database counts a process silent for 5 s dead
 * (`live_workers`, migration 0013), so a beat or three may be late (a busy event loop, a slow
 * query) before its claims are taken over; the takeover is safe even then, since every write of a
 * worker names its claim.
 */
const BEAT_MS = 1_000;

/** A worker process as the database knows it: its claims hold while it beats. */
export interface WorkerPresence {
  /** This process's id, written into every claim it takes. */
  id: string;
  /** Stops beating and removes the process, freeing at once whatever it still holds. */
  stop(): Promise<void>;
}

/**
 * Registers this process as a worker and says it is alive every second until stopped. Workers
 * write `presence.id` into their claims; other processes take a claim over once its holder is no
 * longer alive (killed, frozen, cut off from the database), seconds after it fell silent.
 */
export async function startWorkerPresence(
  db: Pick<Db, 'query'>,
  log: Pick<Logger, 'warn'>,
): Promise<WorkerPresence> {
  const id = randomUUID();
  await db.query('INSERT INTO worker_processes (id, name) VALUES ($1, $2)', [
    id,
    `${hostname()}:${process.pid}`,
  ]);
  let failing = false;
  let beating: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    beating = db
      .query(
        `INSERT INTO worker_processes (id, name) VALUES ($1, $2)
       ON CONFLICT (id) DO UPDATE SET seen_at = clock_timestamp()`,
        [id, `${hostname()}:${process.pid}`],
      )
      .then(
        () => {
          failing = false;
        },
        (error: unknown) => {
          // Once: a database away for a while would otherwise log every second.
          if (!failing) log.warn({ err: error }, 'cannot tell the database this worker is alive');
          failing = true;
        },
      );
  }, BEAT_MS);
  timer.unref();
  return {
    id,
    async stop() {
      clearInterval(timer);
      // A beat under way would otherwise bring the row back after it is deleted.
      await beating;
      await db.query('DELETE FROM worker_processes WHERE id = $1', [id]);
    },
  };
}
