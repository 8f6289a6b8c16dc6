// The socket side of the local JSON-RPC endpoint, run in a worker thread of its own. It owns the
// HTTP and WebSocket servers and does everything that touches a socket (accepting, reading, HTTP
// parsing, writing answers), while the ledger's thread only parses JSON-RPC, runs the chain and
// stringifies answers. On a small machine a socket write costs about as much as executing a
// transfer, so doing the two on different threads is what lets the endpoint keep up with the chain.
//
// The threads exchange flat arrays of numbers and strings (`[op, id, text, op, id, text, …]`): one
// message per event-loop turn in each direction, and flat arrays of primitives are the cheapest
// thing to copy between threads.
import { createServer, Server as HttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Server } from 'node:net';
import { isMainThread, type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { type WebSocket, WebSocketServer } from 'ws';
import { type Respond, RpcHttpServer } from './rpc-http.ts';

/** What the transport thread needs to start. */
export interface TransportConfig {
  host: string;
  port: number;
  /** WebSocket-only port; 'next' for port + 1 (a free one when port is 0); null for none. */
  wsPort: number | 'next' | null;
  maxBodyBytes: number;
}

/** Transport to chain: an HTTP request body to answer (`REQUEST, id, body`). */
export const REQUEST = 0;
/** Transport to chain: a WebSocket connection opened (`WS_OPEN, conn`). */
export const WS_OPEN = 1;
/** Transport to chain: a WebSocket text message (`WS_MESSAGE, conn, text`). */
export const WS_MESSAGE = 2;
/** Transport to chain: a WebSocket connection closed (`WS_CLOSE, conn`). */
export const WS_CLOSE = 3;
/** Chain to transport: the answer to request `id` (`REPLY, id, status, body`; empty body: 204). */
export const REPLY = 0;
/** Chain to transport: a text frame for a WebSocket connection (`WS_SEND, conn, text`). */
export const WS_SEND = 1;

/** Control messages from the transport thread. */
export type TransportNotice =
  | { kind: 'listening'; port: number; wsPort: number }
  | { kind: 'failed'; message: string; code?: string }
  | { kind: 'closed' };

/** Control message to the transport thread: close every server and connection, then exit. */
export interface TransportClose {
  kind: 'close';
}

const EMPTY_HEADERS = ['Access-Control-Allow-Origin', '*'];
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
const KEEP_ALIVE_MS = 60_000;
const TOO_LARGE = JSON.stringify({
  jsonrpc: '2.0',
  error: { code: -32600, message: 'Request body too large' },
  id: null,
});

function send(res: ServerResponse, status: number, body: string, contentType = 'application/json') {
  // One header array and one write per answer: Content-Length, no chunked encoding.
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

/** Serves HTTP and WebSocket for the chain thread at the other end of `port`. */
export async function runTransport(port: MessagePort, config: TransportConfig): Promise<void> {
  const pending = new Map<number, Respond>();
  const sockets = new Map<number, WebSocket>();
  let nextRequest = 0;
  let nextConnection = 0;
  let inbox: (number | string)[] = [];
  let flushing = false;

  // Everything that arrived during one turn of the event loop goes to the chain in one message, on
  // the next turn: a burst of requests costs one hand-over instead of one each.
  function flush() {
    flushing = false;
    const events = inbox;
    inbox = [];
    port.postMessage(events);
  }
  function enqueue(...event: (number | string)[]) {
    for (const item of event) inbox.push(item);
    if (!flushing) {
      flushing = true;
      setImmediate(flush);
    }
  }

  function deliver(out: (number | string)[]) {
    for (let i = 0; i < out.length; ) {
      if (out[i] === REPLY) {
        const id = out[i + 1] as number;
        const status = out[i + 2] as number;
        const body = out[i + 3] as string;
        i += 4;
        const respond = pending.get(id);
        if (!respond) continue;
        pending.delete(id);
        respond(status, body);
      } else {
        const socket = sockets.get(out[i + 1] as number);
        if (socket?.readyState === 1) socket.send(out[i + 2] as string);
        i += 3;
      }
    }
  }

  function answerBody(body: string, respond: Respond) {
    const id = ++nextRequest;
    pending.set(id, respond);
    enqueue(REQUEST, id, body);
  }

  // The requests the hot path of rpc-http.ts hands over: bodies it does not read itself, CORS
  // preflights, health checks and the rest.
  function onRequest(req: IncomingMessage, res: ServerResponse) {
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= config.maxBodyBytes) chunks.push(chunk);
      });
      req.on('end', () => {
        if (size > config.maxBodyBytes) {
          send(res, 413, TOO_LARGE);
          return;
        }
        const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
        answerBody(body.toString('utf8'), (status, answer) => {
          if (answer !== '') {
            send(res, status, answer);
            return;
          }
          res.writeHead(status, EMPTY_HEADERS);
          res.end();
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
      send(res, 200, 'ok', 'text/plain');
      return;
    }
    res.writeHead(405, ['Content-Type', 'text/plain', 'Allow', 'POST, OPTIONS']);
    res.end('Used HTTP Method is not allowed. POST or OPTIONS is required');
  }

  const wss = new WebSocketServer({ noServer: true, maxPayload: config.maxBodyBytes });
  wss.on('connection', (socket) => {
    const conn = ++nextConnection;
    sockets.set(conn, socket);
    enqueue(WS_OPEN, conn);
    socket.on('message', (data) => enqueue(WS_MESSAGE, conn, data.toString()));
    socket.on('close', () => {
      sockets.delete(conn);
      enqueue(WS_CLOSE, conn);
    });
    // A protocol error closes the socket (and 'close' follows); it must not end the thread.
    socket.on('error', () => {});
  });
  const upgrade = (server: HttpServer) =>
    server.on('upgrade', (req, socket, head) =>
      wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req)),
    );

  const servers: Server[] = [];
  try {
    const fallback = createServer({ keepAliveTimeout: KEEP_ALIVE_MS }, onRequest);
    upgrade(fallback);
    const http = new RpcHttpServer({
      fallback,
      maxBodyBytes: config.maxBodyBytes,
      keepAliveMs: KEEP_ALIVE_MS,
      onBody: answerBody,
    });
    servers.push(http);
    const httpPort = await listen(http, config.host, config.port);
    let wsPort = httpPort;
    if (config.wsPort !== null) {
      const wsServer = createServer((_req, res) => send(res, 426, 'Upgrade Required', 'text/plain'));
      upgrade(wsServer);
      servers.push(wsServer);
      const wanted = config.wsPort === 'next' ? (config.port === 0 ? 0 : httpPort + 1) : config.wsPort;
      wsPort = await listen(wsServer, config.host, wanted);
    }
    port.postMessage({ kind: 'listening', port: httpPort, wsPort } satisfies TransportNotice);
  } catch (error) {
    const { message, code } = error as NodeJS.ErrnoException;
    port.postMessage({ kind: 'failed', message, code } satisfies TransportNotice);
    await Promise.all(servers.map(closeServer));
    port.close();
    return;
  }

  port.on('message', (message: (number | string)[] | TransportClose) => {
    if (Array.isArray(message)) {
      deliver(message);
      return;
    }
    for (const client of wss.clients) client.terminate();
    void Promise.all(servers.map(closeServer)).then(() =>
      port.postMessage({ kind: 'closed' } satisfies TransportNotice),
    );
  });
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
    if (!server.listening) {
      resolve();
      return;
    }
    server.close(() => resolve());
    if (server instanceof HttpServer || server instanceof RpcHttpServer) server.closeAllConnections();
  });
}

if (!isMainThread && parentPort && workerData?.transport) {
  void runTransport(parentPort, workerData.transport as TransportConfig);
}
