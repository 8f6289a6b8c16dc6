// Strict reader of the Solana transaction wire format (legacy and v0). Hand-written rather than
// using @solana/kit's decoders for two reasons: the native LiteSVM binding aborts the whole process
// on bytes it cannot deserialize, so every byte must be proven well-formed before it gets there;
// and the endpoint needs only offsets and views (keys, blockhash, instructions), which kit's
// decoders would copy into many objects on every transaction.

/** Largest serialized transaction a validator accepts (the UDP packet payload). */
export const PACKET_DATA_SIZE = 1232;

/** Raised when bytes are not a well-formed transaction or message. */
export class WireFormatError extends Error {
  override name = 'WireFormatError';
}

/** One compiled instruction, as views into the transaction bytes. */
export interface WireInstruction {
  programIdIndex: number;
  accounts: Uint8Array;
  data: Uint8Array;
}

/** One address-table lookup of a v0 message. */
export interface WireLookup {
  table: Uint8Array;
  writableIndexes: Uint8Array;
  readonlyIndexes: Uint8Array;
}

/** A parsed message; byte fields are views into the original buffer. */
export interface WireMessage {
  version: 'legacy' | 0;
  numRequiredSignatures: number;
  numReadonlySigned: number;
  numReadonlyUnsigned: number;
  staticKeys: Uint8Array[];
  recentBlockhash: Uint8Array;
  instructions: WireInstruction[];
  lookups: WireLookup[];
}

/** A parsed transaction: `bytes` is exactly the serialized transaction, trailing bytes dropped. */
export interface WireTransaction {
  bytes: Uint8Array;
  signatures: Uint8Array[];
  messageBytes: Uint8Array;
  message: WireMessage;
}

interface Cursor {
  buf: Uint8Array;
  pos: number;
}

function fail(reason: string): never {
  throw new WireFormatError(reason);
}

function take(c: Cursor, length: number): Uint8Array {
  if (c.pos + length > c.buf.length) fail('io error: unexpected end of file');
  const view = c.buf.subarray(c.pos, c.pos + length);
  c.pos += length;
  return view;
}

function byte(c: Cursor): number {
  if (c.pos >= c.buf.length) fail('io error: unexpected end of file');
  return c.buf[c.pos++] as number;
}

// compact-u16 ("short_vec"): 1-3 bytes, 7 bits each; aliases (non-minimal forms) and overflow are
// refused exactly as the Rust decoder refuses them.
function compactU16(c: Cursor): number {
  const b0 = byte(c);
  if (b0 < 0x80) return b0;
  const b1 = byte(c);
  if (b1 === 0) fail('short_vec: alias encoding');
  if (b1 < 0x80) return (b0 & 0x7f) | (b1 << 7);
  const b2 = byte(c);
  if (b2 === 0) fail('short_vec: alias encoding');
  if (b2 > 0x03) fail('short_vec: overflow');
  return (b0 & 0x7f) | ((b1 & 0x7f) << 7) | (b2 << 14);
}

function readMessage(c: Cursor): WireMessage {
  const first = byte(c);
  let version: 'legacy' | 0 = 'legacy';
  let numRequiredSignatures = first;
  if (first & 0x80) {
    if ((first & 0x7f) !== 0) fail(`invalid value: unsupported message version ${first & 0x7f}`);
    version = 0;
    numRequiredSignatures = byte(c);
  }
  const numReadonlySigned = byte(c);
  const numReadonlyUnsigned = byte(c);
  const keyCount = compactU16(c);
  const staticKeys: Uint8Array[] = new Array(keyCount);
  for (let i = 0; i < keyCount; i++) staticKeys[i] = take(c, 32);
  const recentBlockhash = take(c, 32);
  const ixCount = compactU16(c);
  const instructions: WireInstruction[] = new Array(ixCount);
  for (let i = 0; i < ixCount; i++) {
    const programIdIndex = byte(c);
    const accounts = take(c, compactU16(c));
    const data = take(c, compactU16(c));
    instructions[i] = { programIdIndex, accounts, data };
  }
  const lookups: WireLookup[] = [];
  if (version === 0) {
    const lookupCount = compactU16(c);
    for (let i = 0; i < lookupCount; i++) {
      const table = take(c, 32);
      const writableIndexes = take(c, compactU16(c));
      const readonlyIndexes = take(c, compactU16(c));
      lookups.push({ table, writableIndexes, readonlyIndexes });
    }
  }
  return {
    version,
    numRequiredSignatures,
    numReadonlySigned,
    numReadonlyUnsigned,
    staticKeys,
    recentBlockhash,
    instructions,
    lookups,
  };
}

/** Parses a serialized transaction; throws WireFormatError when the bytes are malformed. */
export function parseWireTransaction(bytes: Uint8Array): WireTransaction {
  const c: Cursor = { buf: bytes, pos: 0 };
  const signatureCount = compactU16(c);
  const signatures: Uint8Array[] = new Array(signatureCount);
  for (let i = 0; i < signatureCount; i++) signatures[i] = take(c, 64);
  const messageStart = c.pos;
  const message = readMessage(c);
  return {
    bytes: bytes.subarray(0, c.pos),
    signatures,
    messageBytes: bytes.subarray(messageStart, c.pos),
    message,
  };
}

/** Parses a serialized message (as `getFeeForMessage` receives it). */
export function parseWireMessage(bytes: Uint8Array): WireMessage {
  return readMessage({ buf: bytes, pos: 0 });
}

/** Whether static key `index` is writable according to the message header. */
export function isStaticKeyWritable(message: WireMessage, index: number): boolean {
  const signed = message.numRequiredSignatures;
  if (index < signed) return index < signed - message.numReadonlySigned;
  return index < message.staticKeys.length - message.numReadonlyUnsigned;
}
