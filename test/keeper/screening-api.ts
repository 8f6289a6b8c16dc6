// A local stand-in for the public sanctions-screening API (decisions, "Screening"):
// `GET /api/v1/address/{address}` with `X-API-Key`, answering `{ "identifications": [...] }`. A test
// chooses which addresses it flags and how it misbehaves.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the stand-in answers: as the real API, with HTTP 500, never, or with a body that is not the API's. */
export type ScreeningApiMode = 'answer' | 'error' | 'hang' | 'not_json' | 'no_identifications';

export interface ScreeningApi {
  url: string;
  /** Addresses it answers with an identification. */
  flagged: Set<string>;
  mode: ScreeningApiMode;
  /** Every request it received: path and `X-API-Key` header. */
  requests: { path: string; apiKey: string | undefined }[];
  close(): Promise<void>;
}

export async function startScreeningApi(apiKey: string): Promise<ScreeningApi> {
  const api: Omit<ScreeningApi, 'url' | 'close'> = { flagged: new Set(), mode: 'answer', requests: [] };
  const server = createServer((request, response) => {
    const key = request.headers['x-api-key'];
    api.requests.push({ path: request.url ?? '', apiKey: typeof key === 'string' ? key : undefined });
    const reply = (status: number, body: string) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(body);
    };
    switch (api.mode) {
      case 'hang':
        return;
      case 'error':
        return reply(500, '{"error":"internal error"}');
      case 'not_json':
        return reply(200, '<html>maintenance</html>');
      case 'no_identifications':
        return reply(200, '{"data":[]}');
    }
    if (key !== apiKey) return reply(401, '{"error":"invalid API key"}');
    const match = /^\/api\/v1\/address\/([^/?]+)$/.exec(request.url ?? '');
    if (request.method !== 'GET' || !match) return reply(404, '{"error":"not found"}');
    const address = decodeURIComponent(match[1]!);
    const identifications = api.flagged.has(address)
      ? [
          {
            category: 'sanctions',
            name: 'SANCTIONS: OFAC SDN Test Entity',
            description: `Address ${address} appears on a sanctions list.`,
            url: 'https://example.org/sdn',
          },
        ]
      : [];
    return reply(200, JSON.stringify({ identifications }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return Object.assign(api, {
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  });
}
