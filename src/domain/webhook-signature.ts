import { createHmac, randomBytes } from 'node:crypto';

/** A new endpoint secret: `whsec_` and 32 random bytes in base64url. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** Hex HMAC-SHA256 of `"<t>.<raw body>"` keyed by the endpoint secret. */
export function computeSignature(secret: string, timestamp: number, rawBody: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${rawBody}`, 'utf8').digest('hex');
}

/**
 * The `MH-Signature` header value: `t=<unix seconds>,v1=<signature>`, with one `v1` per secret
 * (two while a rotated secret's overlap window lasts).
 */
export function signatureHeader(secrets: readonly string[], timestamp: number, rawBody: string): string {
  return [
    `t=${timestamp}`,
    ...secrets.map((secret) => `v1=${computeSignature(secret, timestamp, rawBody)}`),
  ].join(',');
}
