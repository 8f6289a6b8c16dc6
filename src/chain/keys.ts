// Account keys travel through the ledger as raw 32-byte views; where one must index a Map, it is
// turned into a latin1 string (one char per byte), which costs far less than base58.
import { decodeBase58Exact } from './base58.ts';

/** A Map key for raw key bytes. */
export function keyOf(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

/** The Map key of a base58 address that is known to be valid (program ids, sysvars). */
export function keyOfAddress(address: string): string {
  const bytes = decodeBase58Exact(address, 32);
  if (!bytes) throw new Error(`not an address: ${address}`);
  return keyOf(bytes);
}
