import type { SecretBox } from './secret-box.ts';

/*
 * A transfer's keeper key at rest: its 32-byte private key, base64, sealed in `keeper_secret`.
 */

/** A keeper's private key as its column stores it. */
export function sealKeeperKey(secrets: SecretBox, privateKey: Uint8Array): string {
  return secrets.seal(Buffer.from(privateKey).toString('base64'));
}

/** A keeper's private key from its sealed column. */
export function openKeeperKey(secrets: SecretBox, sealed: string): Uint8Array {
  return new Uint8Array(Buffer.from(secrets.open(sealed), 'base64'));
}
