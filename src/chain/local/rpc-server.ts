// HTTP and WebSocket transport of the local JSON-RPC endpoint. node:http serves requests (keep-alive,
// no framework: the endpoint's cost per request is the figure the bench watches) and `ws` serves
// subscriptions, both on the RPC port (upgrade) and on the conventional RPC port + 1.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { decodeBase58Exact } from '../base58.ts';
import { keyOf } from '../keys.ts';
import type { Ledger } from './ledger.ts';
import { accountEncoding, encodeAccount, RpcError } from './rpc-json.ts';
import { rpcMethods } from './rpc-methods.ts';

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

const JSON_HEADERS = ['Content-Type', 'application/json', 'Access-Control-Allow-Origin', '*'];
const CORS_PREFLIGHT_HEADERS = [
  'Access-Control-Allow-Origin',
  '*',
  'Access-Control-Allow-Methods',
  'POST, GET, OPTIONS',
  'Access-Control-Allow-Headers',
  'Content-Type, Solana-Client, Authorization',
  'Access-Control-Max-Age',
  '86400',
];
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
  const maxBody = options.maxBodyBytes ?? 1024 * 1024;
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

  function send(res: ServerResponse, status: number, body: string, headers: string[] = JSON_HEADERS) {
    res.writeHead(status, [...headers, 'Content-Length', String(Buffer.byteLength(body))]);
    res.end(body);
  }

  function reply(res: ServerResponse, out: unknown) {
    if (out === undefined || (Array.isArray(out) && out.length === 0)) {
      res.writeHead(204, JSON_HEADERS);
      res.end();
      return;
    }
    send(res, 200, JSON.stringify(out));
  }

  // Synchronous all the way for synchronous handlers: no promise per request on the hot path.
  function handleBody(text: string, res: ServerResponse) {
    let request: unknown;
    try {
      request = parseBody(text);
    } catch {
      send(res, 200, JSON.stringify(errorBody(null, -32700, 'Parse error')));
      return;
    }
    if (!Array.isArray(request)) {
      const single = answer(request);
      if (single instanceof Promise) single.then((out) => reply(res, out));
      else reply(res, single);
      return;
    }
    if (request.length === 0) {
      reply(res, errorBody(null, -32600, 'Invalid request'));
      return;
    }
    const answers = request.map(answer);
    const settle = (all: unknown[]) =>
      reply(
        res,
        all.filter((a) => a !== undefined),
      );
    if (answers.some((a) => a instanceof Promise)) Promise.all(answers).then(settle);
    else settle(answers);
  }

  function onRequest(req: IncomingMessage, res: ServerResponse) {
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= maxBody) chunks.push(chunk);
      });
      req.on('end', () => {
        if (size > maxBody) {
          send(res, 413, JSON.stringify(errorBody(null, -32600, 'Request body too large')));
          return;
        }
        const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
        setImmediate(() => {
          try {
            handleBody(body.toString('utf8'), res);
          } catch (error) {
            send(res, 500, JSON.stringify(internalError(null, error)));
          }
        });
      });
      return;
    }
    if (req.method === 'OPTIONS') {
      res.writeHead(204, CORS_PREFLIGHT_HEADERS);
      res.end();
      return;
    }
    if (req.method === 'GET' && (req.url === '/health' || req.url?.startsWith('/health?'))) {
      send(res, 200, 'ok', ['Content-Type', 'text/plain', 'Access-Control-Allow-Origin', '*']);
      return;
    }
    send(res, 405, 'Used HTTP Method is not allowed. POST or OPTIONS is required', [
      'Content-Type',
      'text/plain',
      'Allow',
      'POST, OPTIONS',
    ]);
  }

  const subscriptions = createSubscriptions(ledger, log);
  const wss = new WebSocketServer({ noServer: true, maxPayload: maxBody });
  wss.on('connection', (socket) => subscriptions.attach(socket));
  const upgrade = (server: Server) =>
    server.on('upgrade', (req, socket, head) =>
      wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req)),
    );

  const http = createServer({ keepAliveTimeout: 60_000 }, onRequest);
  upgrade(http);
  const port = await listen(http, host, options.port ?? 8899);
  let wsServer: Server | undefined;
  let wsPort = port;
  if (options.wsPort !== null) {
    wsServer = createServer((_req, res) =>
      send(res, 426, 'Upgrade Required', ['Content-Type', 'text/plain']),
    );
    upgrade(wsServer);
    wsPort = await listen(wsServer, host, options.wsPort ?? (options.port === 0 ? 0 : port + 1));
  }
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}`,
    wsUrl: `ws://${urlHost}:${wsPort}`,
    async close() {
      subscriptions.close();
      for (const client of wss.clients) client.terminate();
      await Promise.all([http, wsServer].map((server) => server && closeServer(server)));
    },
  };
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

interface Subscription {
  id: number;
  socket: WebSocket;
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

// Subscriptions of every connected socket, fed by the ledger's slot and transaction events.
function createSubscriptions(ledger: Ledger, log?: ChainLog) {
  let nextId = 0;
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
    if (sub.socket.readyState !== 1) return;
    sub.socket.send(
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
    socket: WebSocket,
    kind: Subscription['kind'],
    params: unknown[],
  ): { sub: Subscription; after?: () => void } {
    const sub: Subscription = { id: ++nextId, socket, kind };
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

  function onMessage(socket: WebSocket, text: string) {
    let request: { id?: unknown; method?: unknown; params?: unknown };
    try {
      request = JSON.parse(text);
    } catch {
      socket.send(JSON.stringify(errorBody(null, -32700, 'Parse error')));
      return;
    }
    const { id, method } = request;
    if (!('id' in request)) return; // notifications (such as keep-alive pings) get no answer
    const params = Array.isArray(request.params) ? request.params : [];
    const reply = (body: object) => socket.send(JSON.stringify(body));
    try {
      if (typeof method === 'string' && Object.hasOwn(SUBSCRIBE_KINDS, method)) {
        const { sub, after } = subscribe(socket, SUBSCRIBE_KINDS[method] as Subscription['kind'], params);
        reply({ jsonrpc: '2.0', result: sub.id, id });
        after?.();
      } else if (typeof method === 'string' && UNSUBSCRIBE.has(method)) {
        const sub = byId.get(Number(params[0]));
        if (!sub || sub.socket !== socket) throw new RpcError(-32602, 'Invalid subscription id.');
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
    attach(socket: WebSocket) {
      socket.on('message', (data) => onMessage(socket, data.toString()));
      socket.on('close', () => {
        for (const sub of [...byId.values()]) if (sub.socket === socket) remove(sub);
        for (const [, set] of bySignature) for (const sub of set) if (sub.socket === socket) remove(sub);
      });
    },
    close() {
      offSlot();
      offTx();
    },
  };
}
