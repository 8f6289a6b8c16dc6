import { createCipheriv, createDecipheriv, createSecretKey, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Seals secrets the service must be able to read back (webhook signing secrets, keeper keys)
 * with AES-256-GCM under the deployment's encryption key, so a database dump alone reveals none;
 * and derives keys of their own from it for other uses, so that no key serves two purposes.
 */
export function createSecretBox(keyBytes: Buffer) {
  if (keyBytes.length !== KEY_BYTES) throw new RangeError(`the encryption key must be ${KEY_BYTES} bytes`);
  // A KeyObject is prepared once; a raw Buffer would be copied and checked on every call.
  const key = createSecretKey(keyBytes);
  return {
    /** Encrypts `plaintext` into `v1.<base64url(iv | tag | ciphertext)>`. */
    seal(plaintext: string): string {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')}`;
    },
    /** Decrypts a value made by {@link seal}; throws if it was tampered with or sealed under another key. */
    open(sealed: string): string {
      const [version, body] = sealed.split('.');
      if (version !== VERSION || !body) throw new Error('unknown sealed secret format');
      const bytes = Buffer.from(body, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([
        decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    },
    /** A 32-byte key for `purpose` alone: HKDF-SHA256 of the encryption key, the purpose its info. */
    deriveKey(purpose: string): Buffer {
      return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `transfer-router ${purpose}`, KEY_BYTES));
    },
  };
}

export type SecretBox = ReturnType<typeof createSecretBox>;

/** Parses an encryption key given as 64 hex characters or base64 of 32 bytes. */
export function parseEncryptionKey(text: string): Buffer | null {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, 'hex')
    : Buffer.from(trimmed, 'base64');
  return key.length === KEY_BYTES ? key : null;
}
