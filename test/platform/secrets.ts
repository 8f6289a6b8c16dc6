import { getBase58Decoder } from '@solana/kit';
import type { PlatformKeys } from '../../src/platform/platform.ts';

const base58 = getBase58Decoder();

/** Every form a platform private key could be written in (keygen array, base58, hex, base64; whole or seed). */
export function secretForms(keys: PlatformKeys): string[] {
  return Object.values(keys).flatMap((keypair) => {
    const numbers = keypair.toKeygenArray();
    const bytes = Buffer.from(numbers);
    const seed = bytes.subarray(0, 32);
    return [
      JSON.stringify(numbers),
      numbers.join(', '),
      base58.decode(bytes),
      base58.decode(seed),
      bytes.toString('hex'),
      seed.toString('hex'),
      bytes.toString('base64'),
      seed.toString('base64'),
    ];
  });
}

/** The forms of `keys` found in `text` (none, when nothing leaked). */
export function leakedSecrets(text: string, keys: PlatformKeys): string[] {
  return secretForms(keys).filter((form) => text.includes(form));
}
