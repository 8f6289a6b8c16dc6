import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, request } from 'undici';

/**
 * Outbound POSTs to integrators' webhook URLs. In production mode a URL must be https and every
 * address its host resolves to must be public; the check runs again on the address actually
 * dialled, so a DNS answer that changes after validation (rebinding) cannot reach the internal
 * network.
 */
export interface WebhookNetworkPolicy {
  requireHttps: boolean;
  allowPrivateNetworks: boolean;
}

export interface WebhookPost {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * The outcome of one POST: an HTTP status with the start of the response body (at most
 * {@link RESPONSE_EXCERPT_CHARS} characters), or the reason no response came.
 */
export type WebhookPostResult =
  | { kind: 'response'; status: number; body: string; durationMs: number }
  | { kind: 'failed'; error: string; durationMs: number };

/** How much of a receiver's answer the delivery log keeps. */
export const RESPONSE_EXCERPT_CHARS = 500;
/** A longer answer is read this far, so the connection can be reused, then dropped. */
const MAX_DRAINED_BYTES = 64 * 1024;

const MAX_URL_LENGTH = 2048;

function isPublicAddress(address: string): boolean {
  try {
    return ipaddr.process(address).range() === 'unicast';
  } catch {
    return false;
  }
}

/** Why a URL may not be used as a webhook endpoint under `policy`, or null when it may. */
export function webhookUrlProblem(text: string, policy: WebhookNetworkPolicy): string | null {
  if (text.length > MAX_URL_LENGTH) return `the URL is longer than ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'the URL is not a valid absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'the URL must use https';
  if (policy.requireHttps && url.protocol !== 'https:') return 'the URL must use https';
  if (url.username || url.password) return 'the URL must not contain credentials';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && !policy.allowPrivateNetworks && !isPublicAddress(host)) {
    return 'the URL must not point at a loopback, private or link-local address';
  }
  if (!policy.allowPrivateNetworks && /^localhost$|\.localhost$|\.local$|\.internal$/i.test(host)) {
    return 'the URL must not point at a local host name';
  }
  return null;
}

/** A DNS lookup that refuses non-public answers, used by the connection pool when dialling. */
function publicOnlyLookup(): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const allowed = addresses.filter((entry) => isPublicAddress(entry.address));
      if (allowed.length === 0 || allowed.length !== addresses.length) {
        const refused = Object.assign(new Error(`${hostname} resolves to a non-public address`), {
          code: 'EADDRNOTPUBLIC',
        });
        return callback(refused, '', 0);
      }
      if (options.all) return callback(null, allowed as unknown as string, 0);
      return callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

/** Creates the sender with its own keep-alive connection pool. */
export function createWebhookSender(policy: WebhookNetworkPolicy) {
  const agent = new Agent({
    keepAliveTimeout: 10_000,
    connections: 64,
    ...(policy.allowPrivateNetworks ? {} : { connect: { lookup: publicOnlyLookup() } }),
  });

  return {
    /** POSTs a body; never throws, the result says what happened. */
    async post(input: WebhookPost): Promise<WebhookPostResult> {
      const started = performance.now();
      const elapsed = () => Math.round((performance.now() - started) * 10) / 10;
      const problem = webhookUrlProblem(input.url, policy);
      if (problem) return { kind: 'failed', error: problem, durationMs: 0 };
      const timeout = AbortSignal.timeout(input.timeoutMs);
      try {
        const response = await request(input.url, {
          method: 'POST',
          body: input.body,
          headers: {
            'content-type': 'application/json',
            'user-agent': 'TransferRouter-Webhooks/1.0',
            ...input.headers,
          },
          dispatcher: agent,
          signal: input.signal ? AbortSignal.any([timeout, input.signal]) : timeout,
          headersTimeout: input.timeoutMs,
          bodyTimeout: input.timeoutMs,
        });
        const body = await readExcerpt(response.body);
        return { kind: 'response', status: response.statusCode, body, durationMs: elapsed() };
      } catch (error) {
        const reason = timeout.aborted ? `no response within ${input.timeoutMs} ms` : describe(error);
        return { kind: 'failed', error: reason, durationMs: elapsed() };
      }
    },
    /** Closes pooled connections. */
    close: () => agent.close(),
  };
}

export type WebhookSender = ReturnType<typeof createWebhookSender>;

/**
 * The start of an answer's body as text, read to its end (up to {@link MAX_DRAINED_BYTES}) so the
 * kept-alive connection can serve the next request.
 */
async function readExcerpt(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  // Four bytes per character at most in UTF-8: enough bytes for the excerpt whatever the script.
  const wanted = RESPONSE_EXCERPT_CHARS * 4;
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let readBytes = 0;
  for await (const chunk of body) {
    if (keptBytes < wanted) {
      const part = chunk.subarray(0, wanted - keptBytes);
      kept.push(part);
      keptBytes += part.length;
    }
    readBytes += chunk.length;
    if (readBytes > MAX_DRAINED_BYTES) {
      body.destroy();
      break;
    }
  }
  // A character cut at the end decodes as U+FFFD: drop it rather than show it.
  const text = Buffer.concat(kept)
    .toString('utf8')
    .replace(/\uFFFD+$/, '');
  return Array.from(text).slice(0, RESPONSE_EXCERPT_CHARS).join('');
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = (error as { code?: string }).code ?? cause?.code;
  const message = cause?.message ?? (error as Error).message;
  return code ? `${code}: ${message}` : message;
}
