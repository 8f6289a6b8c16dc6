// The HTTP side of the local JSON-RPC endpoint. Its hot path, a POST with a Content-Length body on a
// keep-alive connection, is parsed here by hand: node:http builds a stream pair, header objects and
// a handful of events per request, about 28 µs of CPU per request on a small machine against about
// 20 µs here (the transport thread shares the cores with the chain), and no library on npm serves
// HTTP/1.1 more cheaply without a native build. Everything else (other methods, chunked or
// 100-continue bodies, upgrades, malformed or oversized heads) is handed to a node:http server
// together with the bytes already read, and that server keeps the connection from then on, so the
// protocol's corners stay node:http's.
import { type Server as HttpServer, STATUS_CODES } from 'node:http';
import { Server, type Socket } from 'node:net';

/** Answers one request: the status and the body (an empty body is sent without a Content-Type). */
export type Respond = (status: number, body: string) => void;

export interface RpcHttpOptions {
  /** Takes every connection the hot path does not serve, with what was read from it so far. */
  fallback: HttpServer;
  maxBodyBytes: number;
  /** Idle time after which a kept-alive connection is closed. */
  keepAliveMs: number;
  /** A JSON-RPC body to answer through `respond`, once. */
  onBody(body: string, respond: Respond): void;
}

// node:http's default limit; a longer head goes to the fallback, which answers 431.
const MAX_HEAD_BYTES = 16 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n');
const BARE_LF_END = Buffer.from('\n\n');

interface Head {
  contentLength: number;
  keepAlive: boolean;
}

/**
 * Reads the head of a request the hot path can serve; null when node:http should have it. The
 * head is latin1 text without its final blank line.
 */
function parseHead(head: string): Head | null {
  const lineEnd = head.indexOf('\r\n');
  const requestLine = lineEnd < 0 ? head : head.slice(0, lineEnd);
  if (!requestLine.startsWith('POST /') && !requestLine.startsWith('POST http')) return null;
  const version = requestLine.slice(requestLine.lastIndexOf(' ') + 1);
  if (version !== 'HTTP/1.1' && version !== 'HTTP/1.0') return null;
  let keepAlive = version === 'HTTP/1.1';
  let contentLength = -1;
  let at = lineEnd;
  while (at >= 0) {
    const start = at + 2;
    const end = head.indexOf('\r\n', start);
    const line = end < 0 ? head.slice(start) : head.slice(start, end);
    at = end;
    const colon = line.indexOf(':');
    // Folded or nameless lines are for node:http to refuse.
    if (colon <= 0 || line.charCodeAt(0) === 32 || line.charCodeAt(0) === 9) return null;
    // Only a few names matter here; comparing lengths first skips the rest cheaply.
    switch (colon) {
      case 14:
        if (line.slice(0, 14).toLowerCase() !== 'content-length') break;
        if (contentLength >= 0) return null;
        {
          const value = line.slice(15).trim();
          if (!/^\d{1,15}$/.test(value)) return null;
          contentLength = Number(value);
        }
        break;
      case 10:
        if (line.slice(0, 10).toLowerCase() !== 'connection') break;
        {
          const value = line.slice(11).trim().toLowerCase();
          if (value === 'close') keepAlive = false;
          else if (value === 'keep-alive') keepAlive = true;
          else return null;
        }
        break;
      case 17:
        if (line.slice(0, 17).toLowerCase() === 'transfer-encoding') return null;
        break;
      case 6:
        if (line.slice(0, 6).toLowerCase() === 'expect') return null;
        break;
      case 7:
        if (line.slice(0, 7).toLowerCase() === 'upgrade') return null;
        break;
    }
  }
  return { contentLength: Math.max(contentLength, 0), keepAlive };
}

let dateText = '';
let dateAt = 0;
// The Date header, rendered at most once a second as node:http does.
function httpDate(): string {
  const now = Date.now();
  if (now - dateAt >= 1000) {
    dateAt = now - (now % 1000);
    dateText = new Date(dateAt).toUTCString();
  }
  return dateText;
}

function response(status: number, body: string, keepAlive: boolean): string {
  const connection = keepAlive ? 'keep-alive' : 'close';
  const head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nAccess-Control-Allow-Origin: *\r\nDate: ${httpDate()}\r\nConnection: ${connection}\r\n`;
  if (body === '') return `${head}\r\n`;
  return `${head}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** One connection on the hot path: one request at a time, the next one parsed once it is answered. */
class Connection {
  private buffer: Buffer | null = null;
  private busy = false;
  // The peer has finished sending: answer what it sent, then close.
  private ended = false;
  private readonly socket: Socket;
  private readonly options: RpcHttpOptions;
  private readonly onData = (chunk: Buffer) => {
    this.buffer = this.buffer ? Buffer.concat([this.buffer, chunk]) : chunk;
    if (!this.busy) this.next();
  };
  private readonly onIdle = () => this.socket.destroy();
  private readonly onEnd = () => {
    this.ended = true;
    if (!this.busy) this.next();
  };

  constructor(socket: Socket, options: RpcHttpOptions) {
    this.socket = socket;
    this.options = options;
    socket.on('data', this.onData);
    socket.setTimeout(options.keepAliveMs);
    socket.on('timeout', this.onIdle);
    socket.on('end', this.onEnd);
    // A reset by the peer ends the connection; nothing else to do.
    socket.on('error', () => {});
  }

  private next() {
    const buffer = this.buffer;
    if (!buffer) {
      if (this.ended) this.socket.end();
      return;
    }
    const headEnd = buffer.indexOf(HEAD_END);
    if (headEnd < 0) {
      // Heads ended by bare LFs are node:http's to judge as well.
      if (buffer.length > MAX_HEAD_BYTES || buffer.includes(BARE_LF_END)) this.handOver();
      else if (this.ended) this.socket.end();
      return;
    }
    const head = headEnd <= MAX_HEAD_BYTES ? parseHead(buffer.toString('latin1', 0, headEnd)) : null;
    if (!head) {
      this.handOver();
      return;
    }
    // node:http reads an oversized body to its end before refusing it, so the client sees the answer.
    if (head.contentLength > this.options.maxBodyBytes) {
      this.handOver();
      return;
    }
    const bodyStart = headEnd + 4;
    const requestEnd = bodyStart + head.contentLength;
    if (buffer.length < requestEnd) {
      if (this.ended) this.socket.end();
      return;
    }
    const body = buffer.toString('utf8', bodyStart, requestEnd);
    this.buffer = buffer.length > requestEnd ? buffer.subarray(requestEnd) : null;
    // Nothing the client sends after asking to close is read, let alone run.
    if (!head.keepAlive) this.stopReading();
    this.busy = true;
    this.options.onBody(body, (status, answer) => this.respond(status, answer, head.keepAlive));
  }

  private respond(status: number, body: string, keepAlive: boolean) {
    this.busy = false;
    if (this.socket.destroyed) return;
    if (!keepAlive) {
      this.socket.end(response(status, body, false));
      return;
    }
    this.socket.write(response(status, body, true));
    this.next();
  }

  private stopReading() {
    const { socket } = this;
    socket.off('data', this.onData);
    socket.off('end', this.onEnd);
    this.buffer = null;
  }

  // node:http takes the connection: the unread bytes go back into the socket, which is paused
  // until node:http listens so that they reach its parser first.
  private handOver() {
    const { socket, buffer } = this;
    socket.pause();
    this.stopReading();
    socket.setTimeout(0);
    socket.off('timeout', this.onIdle);
    if (buffer) socket.unshift(buffer);
    this.options.fallback.emit('connection', socket);
    socket.resume();
  }
}

/** A TCP server whose connections are served by the hot path, or by `options.fallback`. */
export class RpcHttpServer extends Server {
  private readonly sockets = new Set<Socket>();

  constructor(options: RpcHttpOptions) {
    // Half-open: a client may end its side after sending its requests and still read the answers.
    super({ noDelay: true, allowHalfOpen: true }, (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      new Connection(socket, options);
    });
  }

  /** Drops every connection, whichever path serves it (as node:http's server method of that name). */
  closeAllConnections() {
    for (const socket of this.sockets) socket.destroy();
  }
}
