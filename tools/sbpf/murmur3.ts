/**
 * MurmurHash3 (x86, 32-bit). The sBPF loader names syscalls by this hash of their name (seed 0);
 * it is a dozen lines, so it is written here rather than pulled in as a dependency.
 */
export function murmur3_32(bytes: Uint8Array, seed = 0): number {
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  let h = seed >>> 0;
  const blocks = bytes.length >>> 2;
  for (let i = 0; i < blocks; i++) {
    const o = i * 4;
    let k = (bytes[o]! | (bytes[o + 1]! << 8) | (bytes[o + 2]! << 16) | (bytes[o + 3]! << 24)) >>> 0;
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) >>> 0;
  }
  const tail = blocks * 4;
  const rest = bytes.length & 3;
  if (rest > 0) {
    let k = 0;
    for (let i = rest - 1; i >= 0; i--) k = (k << 8) | bytes[tail + i]!;
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
  }
  h ^= bytes.length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The hash under which the sBPF loader registers a syscall name. */
export function syscallHash(name: string): number {
  return murmur3_32(new TextEncoder().encode(name));
}
