import { createPrivateKey, createPublicKey, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import {
  type Address,
  createKeyPairSignerFromBytes,
  getAddressDecoder,
  type KeyPairSigner,
} from '@solana/kit';

const SEED_BYTES = 32;
const KEYPAIR_BYTES = 64;
// DER header of a PKCS#8 Ed25519 private key; the 32-byte seed follows it.
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** The Ed25519 public key of a 32-byte seed (synchronous, so configuration can check keys as it loads). */
function publicKeyOf(seed: Uint8Array): Uint8Array {
  const key = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  return new Uint8Array(createPublicKey(key).export({ format: 'der', type: 'spki' }).subarray(-32));
}

/**
 * A keypair's 64 bytes in solana-keygen's layout (seed, then public key). The bytes never show in
 * JSON (logs, responses) or `console.log`/`inspect`: only the address does.
 */
export class KeypairBytes {
  readonly #bytes: Uint8Array;
  readonly address: Address;

  constructor(bytes: Uint8Array) {
    if (bytes.length !== KEYPAIR_BYTES) throw new Error(`a keypair has ${KEYPAIR_BYTES} bytes`);
    const expected = publicKeyOf(bytes.subarray(0, SEED_BYTES));
    if (!Buffer.from(expected).equals(bytes.subarray(SEED_BYTES)))
      throw new Error('its last 32 bytes are not the public key of its first 32');
    this.#bytes = bytes.slice();
    this.address = getAddressDecoder().decode(expected);
  }

  /** The 64 bytes as numbers, solana-keygen's file format; only for sealing them. */
  toKeygenArray(): number[] {
    return Array.from(this.#bytes);
  }

  /** A signer whose private key cannot be exported again. */
  signer(): Promise<KeyPairSigner> {
    return createKeyPairSignerFromBytes(this.#bytes);
  }

  toJSON(): string {
    return `[keypair ${this.address}]`;
  }

  [inspect.custom](): string {
    return `KeypairBytes(${this.address})`;
  }
}

/** A fresh random keypair. */
export function generateKeypair(): KeypairBytes {
  const seed = randomBytes(SEED_BYTES);
  return new KeypairBytes(Buffer.concat([seed, publicKeyOf(seed)]));
}

const FORMAT = 'must be a JSON array of 64 numbers (a solana-keygen keypair file) or the path of such a file';

/**
 * A keypair from solana-keygen's format: a JSON array of 64 byte values. Throws with a message
 * that never quotes the input (it is a secret).
 */
export function keypairFromKeygenJson(value: unknown): KeypairBytes {
  if (
    !Array.isArray(value) ||
    value.length !== KEYPAIR_BYTES ||
    !value.every((byte) => Number.isInteger(byte) && byte >= 0 && byte <= 255)
  ) {
    throw new Error(FORMAT);
  }
  try {
    return new KeypairBytes(Uint8Array.from(value as number[]));
  } catch (error) {
    throw new Error(`is not a keypair: ${(error as Error).message}`);
  }
}

/**
 * A keypair setting: the JSON array itself, or the path of a file holding it (as `solana-keygen new
 * -o` writes). Throws with a message fit for the operator that never quotes the secret.
 */
export function parseKeypairSetting(text: string): KeypairBytes {
  const trimmed = text.trim();
  let json = trimmed;
  if (!trimmed.startsWith('[')) {
    try {
      json = readFileSync(trimmed, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new Error(`${FORMAT}; cannot read the file ${trimmed} (${code})`);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    // JSON.parse's message quotes the text it failed on: it is not passed on.
    throw new Error(`${FORMAT}; it is not valid JSON`);
  }
  return keypairFromKeygenJson(value);
}
