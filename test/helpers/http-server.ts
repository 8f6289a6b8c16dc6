import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as a test server saw it. */
export interface SeenRequest {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
}

/** A local HTTP server on port 0 that answers the way a test tells it to, recording each request. */
export interface TestServer {
  readonly url: string;
  readonly requests: SeenRequest[];
  /** Replaces the handler for the following requests. */
  answer(handler: (request: IncomingMessage, response: ServerResponse) => void): void;
  close(): Promise<void>;
}

/** Starts a {@link TestServer}; tests of the provider clients point their base URL at it. */
export async function startTestServer(): Promise<TestServer> {
  const requests: SeenRequest[] = [];
  let handler = (_request: IncomingMessage, response: ServerResponse) => {
    response.writeHead(500).end();
  };
  const server = createServer((request, response) => {
    requests.push({ path: request.url ?? '', headers: request.headers });
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    answer(next) {
      handler = next;
    },
    close() {
      // Requests a test left hanging (timeouts) must not keep the server open.
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/** A handler that answers with a JSON body (or raw text when `body` is a string). */
export function json(status: number, body: unknown, headers: Record<string, string> = {}) {
  return (_request: IncomingMessage, response: ServerResponse) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(text);
  };
}

/** A handler that never answers, to exercise client timeouts. */
export function hang() {
  return () => {};
}
