// The local JSON-RPC endpoint: JSON-RPC requests are answered here, on the ledger's thread, and the
// sockets (HTTP with keep-alive, and WebSocket subscriptions on the RPC port and on the
// conventional RPC port + 1) are served by a worker thread (rpc-transport.ts). No framework: the
// endpoint's cost per request is the figure the bench watches.
import { Worker } from 'node:worker_threads';
import { decodeBase58Exact } from '../base58.ts';
import { keyOf } from '../keys.ts';
import type { Ledger } from './ledger.ts';
import { accountEncoding, encodeAccount, RpcError } from './rpc-json.ts';
import { rpcMethods } from './rpc-methods.ts';
import {
  REPLY,
  REQUEST,
  type TransportClose,
  type TransportConfig,
  type TransportNotice,
  WS_CLOSE,
  WS_MESSAGE,
  WS_OPEN,
  WS_SEND,
} from './rpc-transport.ts';

/** Minimal logger (pino-compatible). */
export interface ChainLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Options of the endpoint. */
export interface RpcServerOptions {
  ledger: Ledger;
  host?: string;
  /** HTTP port; 0 picks a free one. Default 8899. */
  port?: number;
  /** Extra WebSocket-only port; default port + 1 (or a free one when port is 0); null for none. */
  wsPort?: number | null;
  /** Largest accepted request body (default 1 MiB). */
  maxBodyBytes?: number;
  log?: ChainLog;
}

/** A running endpoint. */
export interface RpcServer {
  url: string;
  wsUrl: string;
  close(): Promise<void>;
}

// Longest a finished answer waits for the rest of its burst. A message between threads costs about
// half as much as executing a transfer in a sandboxed VM (it may wake the other thread), so answers
// go a handful at a time rather than one by one.
const FLUSH_AFTER_MS = 0.25;
// Numbers past 2^53 in a request (lamports, amounts) must keep every digit.
const BIG_NUMBER = /\d{16,}/;

type JsonRpcRequest = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };

function parseBody(text: string): unknown {
  if (!BIG_NUMBER.test(text)) return JSON.parse(text);
  return JSON.parse(text, (_key, value, context?: { source?: string }) =>
    typeof value === 'number' &&
    !Number.isSafeInteger(value) &&
    context?.source &&
    /^\d+$/.test(context.source)
      ? BigInt(context.source)
      : value,
  );
}

function errorBody(id: unknown, code: number, message: string, data?: unknown) {
  const error: Record<string, unknown> = { code, message };
  if (data !== undefined) error.data = data;
  return { jsonrpc: '2.0', error, id: id ?? null };
}

/** Starts the endpoint over `ledger`. */
export async function startRpcServer(options: RpcServerOptions): Promise<RpcServer> {
  const { ledger } = options;
  const host = options.host ?? '127.0.0.1';
  const log = options.log;

  function internalError(id: unknown, error: unknown) {
    log?.error({ err: error }, 'local chain RPC handler failed');
    return errorBody(id, -32603, 'Internal error');
  }

  // Answers one request object; undefined for a notification (no id), which gets no answer.
  function answer(request: unknown): unknown | Promise<unknown> {
    if (typeof request !== 'object' || request === null || Array.isArray(request)) {
      return errorBody(null, -32600, 'Invalid request');
    }
    const { id, method, params, jsonrpc } = request as JsonRpcRequest;
    if (jsonrpc !== '2.0' || typeof method !== 'string' || (params !== undefined && !Array.isArray(params))) {
      return errorBody(id, -32600, 'Invalid request');
    }
    const handler = Object.hasOwn(rpcMethods, method) ? rpcMethods[method] : undefined;
    if (!handler) return errorBody(id, -32601, 'Method not found');
    const isNotification = !('id' in request);
    const done = (result: unknown) => (isNotification ? undefined : { jsonrpc: '2.0', result, id });
    const failed = (error: unknown) => {
      if (isNotification) return undefined;
      return error instanceof RpcError
        ? errorBody(id, error.code, error.message, error.data)
        : internalError(id, error);
    };
    try {
      const result = handler((params as unknown[] | undefined) ?? [], ledger);
      return result instanceof Promise ? result.then(done, failed) : done(result);
    } catch (error) {
      return failed(error);
    }
  }

  // What goes back to the transport thread: sent at the end of each turn, and also every
  // FLUSH_AFTER_MS while a long burst of requests is worked through (see onEvents).
  let outbox: (number | string)[] = [];
  let flushing = false;
  let flushedAt = 0;
  function flush() {
    flushedAt = performance.now();
    flushing = false;
    const out = outbox;
    outbox = [];
    if (out.length > 0) worker.postMessage(out);
  }
  function enqueue(...items: (number | string)[]) {
    for (const item of items) outbox.push(item);
    if (!flushing) {
      flushing = true;
      queueMicrotask(flush);
    }
  }

  function reply(id: number, out: unknown) {
    if (out === undefined || (Array.isArray(out) && out.length === 0)) enqueue(REPLY, id, 204, '');
    else enqueue(REPLY, id, 200, JSON.stringify(out));
  }

  // Synchronous all the way for synchronous handlers: no promise per request on the hot path.
  function handleBody(id: number, text: string) {
    let request: unknown;
    try {
      request = parseBody(text);
    } catch {
      reply(id, errorBody(null, -32700, 'Parse error'));
      return;
    }
    if (!Array.isArray(request)) {
      const single = answer(request);
      if (single instanceof Promise)
        single.then(
          (out) => reply(id, out),
          (error) => failed(id, error),
        );
      else reply(id, single);
      return;
    }
    if (request.length === 0) {
      reply(id, errorBody(null, -32600, 'Invalid request'));
      return;
    }
    const answers = request.map(answer);
    const settle = (all: unknown[]) =>
      reply(
        id,
        all.filter((a) => a !== undefined),
      );
    if (answers.some((a) => a instanceof Promise))
      Promise.all(answers).then(settle, (error) => failed(id, error));
    else settle(answers);
  }

  // Handlers answer their own errors; this is for a failure outside them (an unserialisable
  // answer, a bug), which must still answer the request and never end the thread.
  function failed(id: number, error: unknown) {
    enqueue(REPLY, id, 500, JSON.stringify(internalError(null, error)));
  }

  const subscriptions = createSubscriptions(ledger, (conn, text) => enqueue(WS_SEND, conn, text), log);

  // A burst of requests that arrived together is answered as a stream rather than all at the end,
  // so the transport thread writes the first answers (and their clients send their next requests)
  // while the chain executes the rest; without it the two threads take turns idling.
  function onEvents(events: (number | string)[]) {
    for (let i = 0; i < events.length; ) {
      const op = events[i];
      if (op === REQUEST) {
        const id = events[i + 1] as number;
        try {
          handleBody(id, events[i + 2] as string);
        } catch (error) {
          failed(id, error);
        }
        if (outbox.length > 0 && performance.now() - flushedAt > FLUSH_AFTER_MS) flush();
        i += 3;
      } else if (op === WS_MESSAGE) {
        try {
          subscriptions.message(events[i + 1] as number, events[i + 2] as string);
        } catch (error) {
          log?.error({ err: error }, 'local chain subscription message failed');
        }
        i += 3;
      } else {
        if (op === WS_OPEN) subscriptions.open(events[i + 1] as number);
        else if (op === WS_CLOSE) subscriptions.close(events[i + 1] as number);
        i += 2;
      }
    }
  }

  const transport: TransportConfig = {
    host,
    port: options.port ?? 8899,
    wsPort: options.wsPort === undefined ? 'next' : options.wsPort,
    maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
  };
  const worker = new Worker(new URL('./rpc-transport.ts', import.meta.url), { workerData: { transport } });
  let listening = false;
  let stopped = false;
  let closing: Promise<void> | undefined;
  let onStopped: (() => void) | undefined;
  const ports = await new Promise<{ port: number; wsPort: number }>((resolve, reject) => {
    worker.on('message', (message: (number | string)[] | TransportNotice) => {
      if (Array.isArray(message)) onEvents(message);
      else if (message.kind === 'listening') {
        listening = true;
        resolve(message);
      } else if (message.kind === 'closed') onStopped?.();
      else reject(Object.assign(new Error(message.message), { code: message.code }));
    });
    worker.on('error', (error) => {
      log?.error({ err: error }, 'local chain RPC transport failed');
      reject(error);
    });
    worker.once('exit', (code) => {
      stopped = true;
      if (listening && !closing) log?.error({ code }, 'local chain RPC transport stopped');
      onStopped?.();
      reject(new Error(`local chain RPC transport exited with code ${code}`));
    });
  }).catch(async (error) => {
    subscriptions.dispose();
    await worker.terminate();
    throw error;
  });

  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${ports.port}`,
    wsUrl: `ws://${urlHost}:${ports.wsPort}`,
    close() {
      closing ??= (async () => {
        subscriptions.dispose();
        // Servers and connections are closed by their own thread, then the thread ends.
        if (!stopped) {
          await new Promise<void>((resolve) => {
            onStopped = resolve;
            worker.postMessage({ kind: 'close' } satisfies TransportClose);
          });
        }
        await worker.terminate();
      })();
      return closing;
    },
  };
}

interface Subscription {
  id: number;
  conn: number;
  kind: 'signature' | 'slot' | 'root' | 'account';
  key?: string;
  encoding?: ReturnType<typeof accountEncoding>;
}

const SUBSCRIBE_KINDS: Record<string, Subscription['kind']> = {
  signatureSubscribe: 'signature',
  slotSubscribe: 'slot',
  rootSubscribe: 'root',
  accountSubscribe: 'account',
};
const UNSUBSCRIBE = new Set([
  'signatureUnsubscribe',
  'slotUnsubscribe',
  'rootUnsubscribe',
  'accountUnsubscribe',
]);
const NOTIFICATION_METHOD = {
  signature: 'signatureNotification',
  slot: 'slotNotification',
  root: 'rootNotification',
  account: 'accountNotification',
} as const;

// Subscriptions of every connected socket, fed by the ledger's slot and transaction events. Sockets
// live in the transport thread: here a connection is its number, and `send` queues a text frame.
function createSubscriptions(ledger: Ledger, send: (conn: number, text: string) => void, log?: ChainLog) {
  let nextId = 0;
  const open = new Set<number>();
  const byId = new Map<number, Subscription>();
  const bySignature = new Map<string, Set<Subscription>>();
  const byAccount = new Map<string, Set<Subscription>>();
  const slotSubs = new Set<Subscription>();

  function addTo(index: Map<string, Set<Subscription>>, key: string, sub: Subscription) {
    const set = index.get(key) ?? new Set<Subscription>();
    set.add(sub);
    index.set(key, set);
  }

  function notify(sub: Subscription, result: unknown) {
    if (!open.has(sub.conn)) return;
    send(
      sub.conn,
      JSON.stringify({
        jsonrpc: '2.0',
        method: NOTIFICATION_METHOD[sub.kind],
        params: { result, subscription: sub.id },
      }),
    );
  }

  function remove(sub: Subscription) {
    byId.delete(sub.id);
    slotSubs.delete(sub);
    for (const index of [bySignature, byAccount]) {
      const set = sub.key === undefined ? undefined : index.get(sub.key);
      if (set) {
        set.delete(sub);
        if (set.size === 0) index.delete(sub.key as string);
      }
    }
  }

  const offSlot = ledger.onSlot((slot) => {
    for (const sub of slotSubs)
      notify(sub, sub.kind === 'slot' ? { parent: Math.max(0, slot - 1), root: slot, slot } : slot);
  });
  const offTx = ledger.onTransaction((record, writable) => {
    const subs = bySignature.get(record.signature);
    if (subs) {
      for (const sub of [...subs]) {
        notify(sub, { context: { slot: record.slot }, value: { err: record.err?.json ?? null } });
        remove(sub);
      }
    }
    if (byAccount.size === 0) return;
    for (const address of writable) {
      const accountSubs = byAccount.get(keyOf(address));
      if (!accountSubs) continue;
      const account = ledger.getAccount(address);
      for (const sub of accountSubs) {
        notify(sub, {
          context: { slot: record.slot },
          value: account && encodeAccount(ledger, account, sub.encoding ?? 'base64'),
        });
      }
    }
  });

  function subscribe(
    conn: number,
    kind: Subscription['kind'],
    params: unknown[],
  ): { sub: Subscription; after?: () => void } {
    const sub: Subscription = { id: ++nextId, conn, kind };
    if (kind === 'signature') {
      const signature = params[0];
      if (typeof signature !== 'string' || !decodeBase58Exact(signature, 64))
        throw new RpcError(-32602, 'Invalid param: Invalid');
      sub.key = signature;
      const landed = ledger.signatureStatus(signature, false);
      if (landed) {
        // Already in the status cache: answer at once, as there will be no later event.
        return {
          sub,
          after: () =>
            notify(sub, { context: { slot: landed.slot }, value: { err: landed.err?.json ?? null } }),
        };
      }
      addTo(bySignature, signature, sub);
    } else if (kind === 'account') {
      const address = typeof params[0] === 'string' ? decodeBase58Exact(params[0], 32) : null;
      if (!address) throw new RpcError(-32602, 'Invalid param: Invalid');
      const config = (params[1] ?? {}) as { encoding?: unknown };
      sub.encoding = accountEncoding(config.encoding ?? 'binary');
      sub.key = keyOf(address);
      addTo(byAccount, sub.key, sub);
    } else {
      slotSubs.add(sub);
    }
    byId.set(sub.id, sub);
    return { sub };
  }

  function onMessage(conn: number, text: string) {
    let request: { id?: unknown; method?: unknown; params?: unknown };
    try {
      request = JSON.parse(text);
    } catch {
      send(conn, JSON.stringify(errorBody(null, -32700, 'Parse error')));
      return;
    }
    if (typeof request !== 'object' || request === null || Array.isArray(request)) {
      send(conn, JSON.stringify(errorBody(null, -32600, 'Invalid request')));
      return;
    }
    const { id, method } = request;
    if (!('id' in request)) return; // notifications (such as keep-alive pings) get no answer
    const params = Array.isArray(request.params) ? request.params : [];
    const reply = (body: object) => send(conn, JSON.stringify(body));
    try {
      if (typeof method === 'string' && Object.hasOwn(SUBSCRIBE_KINDS, method)) {
        const { sub, after } = subscribe(conn, SUBSCRIBE_KINDS[method] as Subscription['kind'], params);
        reply({ jsonrpc: '2.0', result: sub.id, id });
        after?.();
      } else if (typeof method === 'string' && UNSUBSCRIBE.has(method)) {
        const sub = byId.get(Number(params[0]));
        if (!sub || sub.conn !== conn) throw new RpcError(-32602, 'Invalid subscription id.');
        remove(sub);
        reply({ jsonrpc: '2.0', result: true, id });
      } else {
        reply(errorBody(id, -32601, 'Method not found'));
      }
    } catch (error) {
      if (error instanceof RpcError) reply(errorBody(id, error.code, error.message, error.data));
      else {
        log?.error({ err: error }, 'local chain subscription failed');
        reply(errorBody(id, -32603, 'Internal error'));
      }
    }
  }

  return {
    open(conn: number) {
      open.add(conn);
    },
    message: onMessage,
    close(conn: number) {
      open.delete(conn);
      for (const sub of [...byId.values()]) if (sub.conn === conn) remove(sub);
    },
    dispose() {
      offSlot();
      offTx();
    },
  };
}
