import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

/**
 * One data-access interface over PostgreSQL: a server through `pg`, or embedded PGlite.
 * Both return `int8` and `numeric` columns as strings so that money never passes through a
 * JavaScript number; row mappers turn them into `bigint`.
 */

export type Row = Record<string, unknown>;

export interface QueryResult<R extends Row> {
  rows: R[];
  rowCount: number;
}

/** Something that runs SQL: the database itself or an open transaction. */
export interface Sql {
  query<R extends Row = Row>(text: string, params?: readonly unknown[]): Promise<QueryResult<R>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
}

export interface Db extends Sql {
  readonly kind: 'postgres' | 'pglite';
  /** Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T>;
  /** Runs `fn` on one dedicated session (for session-level advisory locks). */
  withSession<T>(fn: (session: Sql) => Promise<T>): Promise<T>;
  /**
   * Subscribes to NOTIFY on `channel`; resolves to an unsubscribe function. `onLost` is called
   * (once) if the listening connection breaks, after which no more notifications arrive.
   */
  listen(
    channel: string,
    onNotify: (payload: string) => void,
    onLost?: () => void,
  ): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

const STATEMENT_TIMEOUT_MS = 60_000;
const INT8_OID = 20;
const NUMERIC_OID = 1700;
const asText = (value: string) => value;

/** Opens a pool to a PostgreSQL server. */
export function createPostgresDb(options: { url: string; poolSize?: number; applicationName?: string }): Db {
  const typeParsers = {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === INT8_OID || oid === NUMERIC_OID) return asText;
      return pg.types.getTypeParser(oid, format);
    },
  } as pg.CustomTypesConfig;
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    application_name: options.applicationName ?? 'transfer-router',
    // No statement may hold a connection forever; migrations lift this for their own session.
    statement_timeout: STATEMENT_TIMEOUT_MS,
    types: typeParsers,
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  const notifications = createNotificationConnection({
    connectionString: options.url,
    application_name: `${options.applicationName ?? 'transfer-router'} (notifications)`,
    types: typeParsers,
  });

  const query = async <R extends Row>(
    client: pg.Pool | pg.PoolClient,
    text: string,
    params?: readonly unknown[],
  ) => {
    const result = await client.query<R>(text, params as unknown[] | undefined);
    return { rows: result.rows, rowCount: result.rowCount ?? 0 };
  };

  const session = (client: pg.Pool | pg.PoolClient): Sql => ({
    query: (text, params) => query(client, text, params),
    exec: async (script) => {
      await client.query(script);
    },
  });

  return {
    kind: 'postgres',
    ...session(pool),
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(session(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    async withSession(fn) {
      const client = await pool.connect();
      try {
        return await fn(session(client));
      } finally {
        client.release();
      }
    },
    listen: notifications.listen,
    close: async () => {
      await Promise.all([pool.end(), notifications.close()]);
    },
  };
}

type Listener = { onNotify: (payload: string) => void; onLost: (() => void) | undefined };

/**
 * One connection, outside the query pool, that carries every LISTEN of a process: subscriptions
 * never take connections from queries. If it breaks, every subscriber is told (`onLost`) and the
 * next subscription opens a new one.
 */
function createNotificationConnection(config: pg.ClientConfig) {
  let current: Promise<pg.Client> | undefined;
  const channels = new Map<string, Set<Listener>>();
  const listening = new WeakMap<Set<Listener>, Promise<unknown>>();

  const open = () => {
    const client = new pg.Client(config);
    const opened = (async () => {
      client.on('notification', (message) => {
        for (const listener of channels.get(message.channel) ?? []) listener.onNotify(message.payload ?? '');
      });
      const lost = () => {
        if (current !== opened) return;
        current = undefined;
        const listeners = [...channels.values()].flatMap((set) => [...set]);
        channels.clear();
        client.end().catch(() => {});
        for (const listener of listeners) listener.onLost?.();
      };
      client.on('error', lost);
      client.on('end', lost);
      await client.connect();
      return client;
    })();
    current = opened;
    opened.catch(() => {
      if (current === opened) current = undefined;
    });
    return opened;
  };

  return {
    async listen(channel: string, onNotify: (payload: string) => void, onLost?: () => void) {
      const client = await (current ?? open());
      const listener: Listener = { onNotify, onLost };
      let listeners = channels.get(channel);
      if (!listeners) {
        listeners = new Set();
        channels.set(channel, listeners);
        listening.set(listeners, client.query(`LISTEN ${pg.escapeIdentifier(channel)}`));
      }
      // A second subscriber waits for the first one's LISTEN; if it fails, neither is subscribed
      // and the channel is left for the next subscriber to LISTEN again.
      try {
        await listening.get(listeners);
      } catch (error) {
        if (channels.get(channel) === listeners && listeners.size === 0) channels.delete(channel);
        throw error;
      }
      listeners.add(listener);
      const subscribed = listeners;
      return async () => {
        if (!subscribed.delete(listener) || subscribed.size > 0 || channels.get(channel) !== subscribed)
          return;
        channels.delete(channel);
        await client.query(`UNLISTEN ${pg.escapeIdentifier(channel)}`).catch(() => {});
      };
    },
    async close() {
      const opened = current;
      current = undefined;
      channels.clear();
      if (opened) await (await opened.catch(() => undefined))?.end().catch(() => {});
    },
  };
}

/** Opens (creating if needed) an embedded PGlite database in `dataDir`, or in memory without one. */
export async function createPgliteDb(options: { dataDir?: string } = {}): Promise<Db> {
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const db = await PGlite.create(options.dataDir, {
    parsers: { [INT8_OID]: asText, [NUMERIC_OID]: asText },
  });
  const session = (runner: Pick<PGlite, 'query' | 'exec'>): Sql => ({
    async query<R extends Row>(text: string, params?: readonly unknown[]) {
      const result = await runner.query<R>(text, params as unknown[] | undefined);
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
    },
    exec: async (script) => {
      await runner.exec(script);
    },
  });
  return {
    kind: 'pglite',
    ...session(db),
    transaction: (fn) => db.transaction((tx) => fn(session(tx))),
    // PGlite is a single session already.
    withSession: (fn) => fn(session(db)),
    async listen(channel, onNotify) {
      const unsubscribe = await db.listen(channel, onNotify);
      return unsubscribe;
    },
    close: () => db.close(),
  };
}

const UNAVAILABLE_SQLSTATE_CLASSES = ['08', '53', '57P'];
const UNAVAILABLE_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EPIPE',
  'EHOSTUNREACH',
]);

/** True when an error means the database cannot be reached right now (as opposed to a bad query). */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (UNAVAILABLE_ERRNOS.has(code)) return true;
    if (UNAVAILABLE_SQLSTATE_CLASSES.some((prefix) => code.startsWith(prefix))) return true;
  }
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Cannot use a pool after calling end|PGlite is closed/i.test(
    error.message,
  );
}
