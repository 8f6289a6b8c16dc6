import { createHash } from 'node:crypto';
import { stringify as stableStringify } from 'safe-stable-stringify';

const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9._-]{8,64}$/;

/** True when a client-chosen Idempotency-Key has the allowed form (8-64 of `[A-Za-z0-9._-]`). */
export function isValidIdempotencyKey(key: string): boolean {
  return IDEMPOTENCY_KEY_PATTERN.test(key);
}

/**
 * Fingerprint of what a request asks for: method, route, path parameters and body. Key order in
 * the JSON body does not matter, so a client re-serialising the same object is not a different
 * request.
 */
export function requestFingerprint(input: {
  method: string;
  route: string;
  params: unknown;
  body: unknown;
}): Buffer {
  return createHash('sha256')
    .update(
      stableStringify([
        input.method,
        input.route,
        input.params ?? null,
        input.body === undefined ? null : input.body,
      ]) ?? '',
    )
    .digest();
}
