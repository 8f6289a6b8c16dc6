// Account keys travel through the local ledger as raw 32-byte views, which LiteSVM's binding takes;
// where one must index a Map, it is turned into a latin1 string (one char per byte), which costs
// far less than base58.
import { decodeBase58Exact } from './base58.ts';

/** A Map key for raw key bytes. */
export function keyOf(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

/** The raw bytes of a base58 address that is known to be valid (program ids, decoded messages). */
export function addressBytes(address: string): Uint8Array {
  const bytes = decodeBase58Exact(address, 32);
  if (!bytes) throw new Error(`not an address: ${address}`);
  return bytes;
}

/** The Map key of a base58 address that is known to be valid. */
export function keyOfAddress(address: string): string {
  return keyOf(addressBytes(address));
}
