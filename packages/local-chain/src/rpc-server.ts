// The local JSON-RPC endpoint: node:http for JSON-RPC over HTTP and `ws` for subscriptions (on the
// RPC port and on the conventional RPC port + 1), on the ledger's own thread, so a request is
// answered in the same turn as it is read.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer } from 'ws';
import type { Ledger } from './ledger.ts';
import { errorBody, RpcError } from './rpc-json.ts';
import { rpcMethods } from './rpc-methods.ts';
import { type ChainLog, createSubscriptions } from './rpc-subscriptions.ts';

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
  /**
   * WebSocket connections are cut after a random time of this mean, drawn from `seed`, as a
   * provider's sockets are (their subscriptions end with them). Never when absent.
   */
  socketDrops?: { meanMs: number; seed: string };
  log?: ChainLog;
}

/** A running endpoint. */
export interface RpcServer {
  url: string;
  wsUrl: string;
  close(): Promise<void>;
}

const KEEP_ALIVE_MS = 60_000;
const CORS_PREFLIGHT_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'POST, GET, OPTIONS',
  'Access-Control-Allow-Headers': 'Content-Type, Solana-Client, Authorization',
  'Access-Control-Max-Age': '86400',
};
const TOO_LARGE = JSON.stringify({
  jsonrpc: '2.0',
  error: { code: -32600, message: 'Request body too large' },
  id: null,
});
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

function send(res: ServerResponse, status: number, body: string, contentType = 'application/json') {
  res.writeHead(status, [
    'Content-Type',
    contentType,
    'Access-Control-Allow-Origin',
    '*',
    'Content-Length',
    String(Buffer.byteLength(body)),
  ]);
  res.end(body);
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

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** Starts the endpoint over `ledger`. */
export async function startRpcServer(options: RpcServerOptions): Promise<RpcServer> {
  const { ledger, log } = options;
  const host = options.host ?? '127.0.0.1';
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;

  function internalError(id: unknown, error: unknown) {
    log?.error({ err: error }, 'local chain RPC handler failed');
    return errorBody(id, -32603, 'Internal error');
  }

  // Answers one request object; undefined for a notification (no id), which gets no answer.
  async function answer(request: unknown): Promise<object | undefined> {
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
    try {
      const result = await handler((params as unknown[] | undefined) ?? [], ledger);
      return isNotification ? undefined : { jsonrpc: '2.0', result, id };
    } catch (error) {
      if (isNotification) return undefined;
      return error instanceof RpcError
        ? errorBody(id, error.code, error.message, error.data)
        : internalError(id, error);
    }
  }

  // The answer to a body: one object, an array for a batch, or undefined when nothing is owed.
  async function answerBody(text: string): Promise<unknown> {
    let request: unknown;
    try {
      request = parseBody(text);
    } catch {
      return errorBody(null, -32700, 'Parse error');
    }
    if (!Array.isArray(request)) return answer(request);
    if (request.length === 0) return errorBody(null, -32600, 'Invalid request');
    const answers = (await Promise.all(request.map(answer))).filter((a) => a !== undefined);
    return answers.length === 0 ? undefined : answers;
  }

  function onPost(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    let size = 0;
    // An oversized body is read to its end (and dropped) so the client gets the answer, not a reset.
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBodyBytes) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > maxBodyBytes) {
        send(res, 413, TOO_LARGE);
        return;
      }
      answerBody(Buffer.concat(chunks).toString('utf8'))
        .then((out) => {
          if (out === undefined) {
            res.writeHead(204, { 'Access-Control-Allow-Origin': '*' });
            res.end();
          } else send(res, 200, JSON.stringify(out));
        })
        // Handlers answer their own errors; this is a failure outside them (an unserialisable
        // answer, a bug), which must still answer the request.
        .catch((error) => send(res, 500, JSON.stringify(internalError(null, error))));
    });
  }

  function onRequest(req: IncomingMessage, res: ServerResponse) {
    if (req.method === 'POST') onPost(req, res);
    else if (req.method === 'OPTIONS') {
      res.writeHead(204, CORS_PREFLIGHT_HEADERS);
      res.end();
    } else if (req.method === 'GET' && (req.url === '/health' || req.url?.startsWith('/health?'))) {
      send(res, 200, 'ok', 'text/plain');
    } else {
      res.writeHead(405, { 'Content-Type': 'text/plain', Allow: 'POST, OPTIONS' });
      res.end('Used HTTP Method is not allowed. POST or OPTIONS is required');
    }
  }

  const subscriptions = createSubscriptions(ledger, log);
  const wss = new WebSocketServer({ noServer: true, maxPayload: maxBodyBytes });
  let connections = 0;
  wss.on('connection', (socket) => {
    subscriptions.connect(socket);
    const drops = options.socketDrops;
    if (!drops) return;
    const n = connections++;
    const draw = createHash('sha256').update(`${drops.seed}:socket:${n}`).digest().readUIntBE(0, 6) / 2 ** 48;
    const cut = setTimeout(() => socket.terminate(), -drops.meanMs * Math.log(1 - draw));
    cut.unref();
    socket.once('close', () => clearTimeout(cut));
  });
  const servers: Server[] = [];
  function serve(server: Server) {
    server.keepAliveTimeout = KEEP_ALIVE_MS;
    server.on('upgrade', (req, socket, head) =>
      wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req)),
    );
    // A client may pipeline requests after one that asked to close; node:http stops reading there
    // and reports the rest as an error, which must not cut off the answer still in flight. Other
    // errors are answered as node:http answers them by default.
    server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
      if (error.code === 'HPE_CLOSED_CONNECTION') return;
      if (socket.writable && (socket as Socket).bytesWritten === 0) {
        const status =
          error.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
        socket.write(`HTTP/1.1 ${status}\r\nConnection: close\r\n\r\n`);
      }
      socket.destroy();
    });
    servers.push(server);
    return server;
  }

  const port = options.port ?? 8899;
  let httpPort: number;
  let wsPort: number;
  try {
    httpPort = await listen(serve(createServer(onRequest)), host, port);
    wsPort = httpPort;
    if (options.wsPort !== null) {
      const wanted = options.wsPort ?? (port === 0 ? 0 : httpPort + 1);
      const wsOnly = serve(createServer((_req, res) => send(res, 426, 'Upgrade Required', 'text/plain')));
      wsPort = await listen(wsOnly, host, wanted);
    }
  } catch (error) {
    subscriptions.dispose();
    await Promise.all(servers.map(close));
    throw error;
  }

  const urlHost = host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${httpPort}`,
    wsUrl: `ws://${urlHost}:${wsPort}`,
    close() {
      closing ??= (async () => {
        subscriptions.dispose();
        for (const client of wss.clients) client.terminate();
        await Promise.all(servers.map(close));
      })();
      return closing;
    },
  };
}
