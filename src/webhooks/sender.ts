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

/** The outcome of one POST: an HTTP status, or the reason no response came. */
export type WebhookPostResult =
  | { kind: 'response'; status: number; durationMs: number }
  | { kind: 'failed'; error: string; durationMs: number };

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
        // The receiver's answer body is not used; drain it so the connection can be reused.
        await response.body.dump({ limit: 64 * 1024 });
        return { kind: 'response', status: response.statusCode, durationMs: elapsed() };
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

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = (error as { code?: string }).code ?? cause?.code;
  const message = cause?.message ?? (error as Error).message;
  return code ? `${code}: ${message}` : message;
}
