import {
  type IncomingMessage,
  maxHeaderSize,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import type { Duplex } from 'node:stream';
import type { ConnectionError, FastifyBaseLogger } from 'fastify';
import { AppError } from '../domain/errors.ts';
import { envelope } from './errors.ts';

/** How long a connection may take over the parts of a request, and stay idle between requests. */
export interface HttpTimeouts {
  /** From the first byte of a request until all of it (head and body) has arrived. */
  requestMs: number;
  /** From the first byte of a request until its head (request line and headers) has arrived. */
  headersMs: number;
  /** How long a kept-alive connection may wait for its next request. */
  keepAliveMs: number;
}

/** The error envelope as a complete HTTP/1.1 response that closes the connection. */
function rawResponse(error: AppError, requestId: string): string {
  const body = JSON.stringify(envelope(error, requestId));
  return [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

const seconds = (ms: number) => `${ms / 1000} s`;

/** What Node's HTTP parser or its timers refused, as the API's error. */
function fromConnectionError(
  error: ConnectionError & { reason?: unknown },
  timeouts: HttpTimeouts,
): AppError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError(
        'MH_016',
        `The request did not arrive in time: its headers must arrive within ${seconds(timeouts.headersMs)} and all of it, body included, within ${seconds(timeouts.requestMs)}.`,
        { status: 408 },
      );
    case 'HPE_HEADER_OVERFLOW':
      return new AppError(
        'MH_016',
        `The request line and headers are larger than ${maxHeaderSize} bytes together.`,
        { status: 431 },
      );
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new AppError('MH_016', 'The chunk extensions of the request body are too large.', {
        status: 413,
      });
    default: {
      const reason = typeof error.reason === 'string' ? error.reason : error.code;
      return new AppError('MH_016', `The request is not valid HTTP/1.1 (${reason}).`);
    }
  }
}

/**
 * Fastify's `clientErrorHandler`: a connection whose request Node refused before Fastify could see
 * one (malformed HTTP, headers too large, a head or body that does not arrive in time) gets the
 * error envelope with a request id of its own, written raw since there is no request to reply
 * through, and is closed.
 */
export function createClientErrorHandler(deps: {
  newRequestId: () => string;
  timeouts: HttpTimeouts;
  log: FastifyBaseLogger;
}) {
  return (error: ConnectionError, socket: Duplex) => {
    // A reset, or the connection closed mid-request, means the client is gone: nobody to answer.
    if (error.code === 'ECONNRESET' || error.code === 'HPE_INVALID_EOF_STATE' || socket.destroyed) {
      socket.destroy();
      return;
    }
    // As Node checks: an answer already being written to this connection cannot be replaced
    // without corrupting it, so the connection is only closed.
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (socket.writable && !inFlight?.headersSent) {
      const answer = fromConnectionError(error, deps.timeouts);
      const requestId = deps.newRequestId();
      deps.log.info({ reqId: requestId, code: error.code, status: answer.status }, 'connection refused');
      // Written and closed at once, as Node does: a response this small goes to the kernel at once.
      socket.write(rawResponse(answer, requestId));
    }
    socket.destroy();
  };
}

/**
 * Answers with the envelope the two kinds of request Node handles without Fastify: an `Expect`
 * other than `100-continue` (Node's own answer is a bare 417) and `CONNECT` (which Node would
 * drop without an answer; this service is no proxy).
 */
export function answerUnroutedRequests(server: Server, requestId: (request: IncomingMessage) => string) {
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const id = requestId(request);
    const error = new AppError(
      'MH_016',
      `Unsupported Expect header "${request.headers.expect}": only 100-continue is supported.`,
      { status: 417 },
    );
    const body = JSON.stringify(envelope(error, id));
    response.writeHead(error.status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'x-request-id': id,
      // The client holds its body back until told to send it; nothing more is read.
      connection: 'close',
    });
    response.end(body);
  });
  server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    const error = new AppError(
      'MH_016',
      `No route CONNECT ${request.url}. The API reference is at /api/v1/openapi.json.`,
      { status: 404 },
    );
    socket.on('error', () => socket.destroy());
    socket.end(rawResponse(error, requestId(request)), () => socket.destroy());
  });
}
