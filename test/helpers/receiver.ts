import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

/**
 * How the receiver answers: a status and a body (`ok` unless given) after an optional delay, or
 * never (to provoke timeouts).
 */
export type ReceiverBehaviour = { status: number; body?: string; delayMs?: number } | 'hang';

/** A real HTTP server on 127.0.0.1 that records what it receives, for webhook tests. */
export async function startReceiver(initial: ReceiverBehaviour = { status: 200 }) {
  let behaviour = initial;
  const received: ReceivedRequest[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      });
      const current = behaviour;
      if (current === 'hang') return;
      const answer = () =>
        response.writeHead(current.status, { 'content-type': 'text/plain' }).end(current.body ?? 'ok');
      if (current.delayMs) setTimeout(answer, current.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    received,
    /** Changes how later requests are answered. */
    respondWith(next: ReceiverBehaviour) {
      behaviour = next;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
