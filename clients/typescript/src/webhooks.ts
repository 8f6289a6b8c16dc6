import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebhookEvent, WebhookEventSource } from './events.ts';

/**
 * Verifying webhook deliveries on the receiving side, the package's Node.js entry
 * (`@transfer-router/client/webhooks`: it needs `node:crypto`, and its receiver is a `node:http`
 * listener). A delivery carries
 * `MH-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, with one `v1` per
 * secret the endpoint signs with (two while a rotated secret's overlap lasts).
 */

export type { PingEvent, TransferEvent, WebhookEvent, WebhookEventSource } from './events.ts';

/** The header that carries the signature (Node lower-cases header names). */
export const SIGNATURE_HEADER = 'mh-signature';
/** How far the signature's timestamp may be from now unless told otherwise. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** Why a delivery failed verification. */
export type WebhookVerificationErrorCode =
  | 'missing_signature'
  | 'malformed_signature'
  | 'signature_mismatch'
  | 'timestamp_outside_tolerance'
  | 'invalid_payload';

/** A delivery that must not be trusted; `code` says why. */
export class WebhookVerificationError extends Error {
  readonly code: WebhookVerificationErrorCode;

  constructor(code: WebhookVerificationErrorCode, message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.code = code;
  }
}

export interface VerifyWebhookOptions {
  /** Largest accepted distance in seconds between the signature's timestamp and now (default 300). */
  toleranceSeconds?: number;
  /** The current time; defaults to the system clock. */
  now?: Date;
}

const HEX_SIGNATURE = /^[0-9a-f]{64}$/;

function parseHeader(header: string): { timestamp: number; signatures: string[] } {
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const separator = part.indexOf('=');
    if (separator < 0) continue;
    const key = part.slice(0, separator).trim();
    const value = part.slice(separator + 1).trim();
    if (key === 't') {
      if (timestamp !== undefined || !/^\d{1,12}$/.test(value)) {
        throw new WebhookVerificationError(
          'malformed_signature',
          'The signature header has a bad `t` value.',
        );
      }
      timestamp = Number(value);
    } else if (key === 'v1') {
      signatures.push(value.toLowerCase());
    }
  }
  if (timestamp === undefined) {
    throw new WebhookVerificationError('malformed_signature', 'The signature header has no `t=` timestamp.');
  }
  if (signatures.length === 0) {
    throw new WebhookVerificationError('malformed_signature', 'The signature header has no `v1=` signature.');
  }
  return { timestamp, signatures };
}

/**
 * Checks that `rawBody` (the request body exactly as received, before any JSON parsing) was
 * signed with `secret` (or any of several secrets) less than `toleranceSeconds` ago, and returns
 * the parsed event. Signatures are compared in constant time; any `v1` value may match, so
 * deliveries keep verifying while the endpoint's secret is being rotated. Throws
 * {@link WebhookVerificationError} otherwise.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  header: string | readonly string[] | null | undefined,
  secret: string | readonly string[],
  options: VerifyWebhookOptions = {},
): WebhookEvent {
  const value = Array.isArray(header) ? header.join(',') : (header as string | null | undefined);
  if (!value) {
    throw new WebhookVerificationError('missing_signature', `No ${SIGNATURE_HEADER} header on the request.`);
  }
  const secrets = typeof secret === 'string' ? [secret] : [...secret];
  if (secrets.length === 0 || secrets.some((entry) => entry.length === 0)) {
    throw new TypeError('verifyWebhook needs the endpoint secret (whsec_...)');
  }
  const { timestamp, signatures } = parseHeader(value);
  const body = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8');

  let matched = false;
  for (const candidateSecret of secrets) {
    const expected = Buffer.from(computeSignature(candidateSecret, timestamp, body), 'hex');
    for (const signature of signatures) {
      // Every pair is compared (no early exit) so timing reveals nothing about which matched.
      if (HEX_SIGNATURE.test(signature) && timingSafeEqual(expected, Buffer.from(signature, 'hex'))) {
        matched = true;
      }
    }
  }
  if (!matched) {
    throw new WebhookVerificationError(
      'signature_mismatch',
      'No signature matches the body and secret. Verify the raw body exactly as received, with the endpoint’s current secret.',
    );
  }

  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - timestamp) > tolerance) {
    throw new WebhookVerificationError(
      'timestamp_outside_tolerance',
      `The signature's timestamp is ${now - timestamp} s from now, beyond the tolerance of ${tolerance} s (a replay, or a wrong clock).`,
    );
  }

  try {
    return JSON.parse(body) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'The signed body is not valid JSON.');
  }
}

/** Hex HMAC-SHA256 of `"<t>.<raw body>"` keyed by the endpoint secret, as the service signs. */
function computeSignature(secret: string, timestamp: number, rawBody: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${rawBody}`, 'utf8').digest('hex');
}

/**
 * An `MH-Signature` header value for `payload`, for testing a receiver without the service:
 * signed at `timestamp` (unix seconds, default now) with each given secret.
 */
export function generateTestHeader(input: {
  payload: string;
  secret: string | readonly string[];
  timestamp?: number;
}): string {
  const secrets = typeof input.secret === 'string' ? [input.secret] : input.secret;
  const timestamp = input.timestamp ?? Math.floor(Date.now() / 1000);
  return [
    `t=${timestamp}`,
    ...secrets.map((secret) => `v1=${computeSignature(secret, timestamp, input.payload)}`),
  ].join(',');
}

/** A webhook endpoint's receiving side: verifies deliveries and passes their events on. */
export interface WebhookReceiver extends WebhookEventSource {
  /**
   * Verifies one delivery (the raw body and its `MH-Signature` header), passes its event to every
   * subscriber and answers it; throws {@link WebhookVerificationError} for a delivery not to trust.
   */
  receive(rawBody: string | Uint8Array, header: string | readonly string[] | null | undefined): WebhookEvent;
  /** A `node:http` request listener: 200 for a verified delivery, 400 for one not to trust. */
  listener(request: IncomingMessage, response: ServerResponse): void;
}

/**
 * A receiver for one endpoint. `secret` may be a function, for an endpoint whose secret is known
 * only once it is registered (registration sends a ping to the URL first, which the receiver
 * answers 400 while it has no secret: any answer proves the URL reachable).
 */
export function createWebhookReceiver(options: {
  secret: string | readonly string[] | (() => string | readonly string[] | undefined);
  /** Largest accepted age of a signature in seconds (default 300). */
  toleranceSeconds?: number;
  /** The current time; defaults to the system clock. */
  now?: () => Date;
}): WebhookReceiver {
  const listeners = new Set<(event: WebhookEvent) => void>();
  const secrets = () => {
    const secret = typeof options.secret === 'function' ? options.secret() : options.secret;
    if (secret === undefined || secret.length === 0) {
      throw new WebhookVerificationError('signature_mismatch', 'The receiver has no secret yet.');
    }
    return secret;
  };
  const receive: WebhookReceiver['receive'] = (rawBody, header) => {
    const event = verifyWebhook(rawBody, header, secrets(), {
      ...(options.toleranceSeconds === undefined ? {} : { toleranceSeconds: options.toleranceSeconds }),
      ...(options.now ? { now: options.now() } : {}),
    });
    for (const listener of listeners) listener(event);
    return event;
  };
  return {
    receive,
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    listener(request, response) {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        // A subscriber that throws answers 500, so the service delivers the event again later.
        let status = 200;
        try {
          receive(Buffer.concat(chunks), request.headers[SIGNATURE_HEADER]);
        } catch (error) {
          status = error instanceof WebhookVerificationError ? 400 : 500;
        }
        response.writeHead(status).end();
      });
    },
  };
}
