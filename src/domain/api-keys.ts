import { createHash, randomInt } from 'node:crypto';

/** The mode a key works in: test keys see only test objects, live keys only live ones. */
export type KeyMode = 'test' | 'live';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LENGTH = 32;
const API_KEY_PATTERN = /^mh_(test|live)_[0-9A-Za-z]{32}$/;

/**
 * What a live key on a local chain (cluster localnet) is told, at creation and at first use: live
 * mode is for real money, and such a chain's tokens are not.
 */
export const LIVE_KEY_ON_LOCAL_CHAIN =
  'a live API key on a local chain (cluster localnet): its transfers count as live in usage and rewards, yet move tokens that exist only on this chain; use test keys here, and live keys on mainnet';

/** Generates a new API key: `mh_test_` or `mh_live_` followed by 32 random base62 characters. */
export function generateApiKey(mode: KeyMode): string {
  let secret = '';
  for (let index = 0; index < SECRET_LENGTH; index++) secret += BASE62[randomInt(BASE62.length)];
  return `mh_${mode}_${secret}`;
}

/** The mode of a well-formed key, or null when the string cannot be a key at all. */
export function parseApiKey(candidate: string): KeyMode | null {
  const match = API_KEY_PATTERN.exec(candidate);
  return match ? (match[1] as KeyMode) : null;
}

/**
 * SHA-256 of the key. Keys are looked up by this hash: comparing hashes reveals nothing usable
 * about a key even if the comparison is not constant-time, because an attacker cannot steer
 * the hash of a guess towards a stored one.
 */
export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** A recognisable, non-secret hint: prefix and the last four characters. */
export function apiKeyHint(key: string): string {
  return `${key.slice(0, 8)}...${key.slice(-4)}`;
}
