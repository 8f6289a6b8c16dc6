import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._-]{8,64}$/;

/** The request id: the client's `X-Request-Id` when well-formed, otherwise a fresh `req_...`. */
export function requestIdFor(request: IncomingMessage): string {
  const sent = request.headers['x-request-id'];
  if (typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent)) return sent;
  // randomUUID draws from a cached entropy pool: far cheaper per request than randomBytes.
  return `req_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
}
