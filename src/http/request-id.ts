import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._-]{8,64}$/;
const SEQUENCE_LIMIT = 36 ** 8;

/**
 * Request ids: the client's `X-Request-Id` when well-formed, otherwise `req_` with a random
 * prefix of this generator and a counter — unique across processes and restarts without drawing
 * randomness on every request. Without a request (a connection refused before its request could
 * be read), a fresh id.
 */
export function createRequestIdGenerator() {
  const prefix = `req_${randomBytes(8).toString('hex')}`;
  let sequence = randomBytes(4).readUInt32BE() % SEQUENCE_LIMIT;
  return (request?: IncomingMessage): string => {
    const sent = request?.headers['x-request-id'];
    if (typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent)) return sent;
    sequence = (sequence + 1) % SEQUENCE_LIMIT;
    return `${prefix}${sequence.toString(36).padStart(8, '0')}`;
  };
}
