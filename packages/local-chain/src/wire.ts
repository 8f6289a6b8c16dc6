// The transaction wire format, read and written with @solana/kit's codecs. Bytes must be proven
// well-formed before LiteSVM's native binding sees them, because it aborts the whole process on
// bytes it cannot deserialize. Kit's codecs read compact-u16 lengths leniently, non-minimal forms
// included, which the runtime refuses; such a form is always longer than the minimal one, so the
// bytes are accepted only when each part read is exactly as long as kit's encoding of it.
import {
  fixCodecSize,
  getArrayCodec,
  getBytesCodec,
  getBytesEncoder,
  getCompiledTransactionMessageCodec,
  getShortU16Codec,
  getStructEncoder,
  getTransactionVersionDecoder,
  isSolanaError,
  type LegacyCompiledTransactionMessage,
  type ReadonlyUint8Array,
  type V0CompiledTransactionMessage,
} from '@solana/kit';

/** Largest serialized transaction a validator accepts (the UDP packet payload). */
export const PACKET_DATA_SIZE = 1232;

/** Raised when bytes are not a well-formed transaction or message. */
export class WireFormatError extends Error {
  override name = 'WireFormatError';
}

/** A legacy or v0 message (the versions the runtime executes), as kit decodes it. */
export type WireMessage = (LegacyCompiledTransactionMessage | V0CompiledTransactionMessage) & {
  /** The recent blockhash (or durable nonce), base58. */
  lifetimeToken: string;
};

/** A decoded transaction: `bytes` is exactly the serialized transaction, trailing bytes dropped. */
export interface WireTransaction {
  bytes: Uint8Array;
  signatures: ReadonlyUint8Array[];
  message: WireMessage;
}

// A transaction is its compact array of 64-byte signatures followed by its message.
const signaturesCodec = getArrayCodec(fixCodecSize(getBytesCodec(), 64), { size: getShortU16Codec() });
const messageCodec = getCompiledTransactionMessageCodec();
const transactionEncoder = getStructEncoder([
  ['signatures', signaturesCodec],
  ['messageBytes', getBytesEncoder()],
]);
const versionDecoder = getTransactionVersionDecoder();

function fail(reason: string): never {
  throw new WireFormatError(reason);
}

function assertMinimal(encodedSize: number, readSize: number) {
  if (encodedSize !== readSize) fail('short_vec: alias encoding');
}

// Kit's decoding errors become WireFormatErrors: malformed bytes are the sender's mistake.
function reading<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (isSolanaError(error)) throw new WireFormatError(error.message, { cause: error });
    throw error;
  }
}

function readMessage(bytes: Uint8Array, offset: number): [WireMessage, number] {
  // Kit also reads v1 messages; the runtime does not.
  const [version] = versionDecoder.read(bytes, offset);
  if (version !== 'legacy' && version !== 0) fail(`invalid value: unsupported message version ${version}`);
  const [message, end] = messageCodec.read(bytes, offset);
  assertMinimal(messageCodec.getSizeFromValue(message), end - offset);
  return [message as WireMessage, end];
}

/**
 * Transactions decoded, by the very arrays they were decoded from. A transaction's bytes are read
 * several times on their way (checked, simulated in preflight, handed to a leader, executed,
 * counted for the fee market), and kit's codecs (base58 through BigInt) made those readings a
 * fifth of the chain's time at 100 hops a second. Keyed by the array, not its content, and kept
 * only while it lives: nothing writes into a transaction's bytes once they are received.
 */
const decodedTransactions = new WeakMap<Uint8Array, WireTransaction>();

/** Decodes a serialized transaction; throws WireFormatError when the bytes are malformed. */
export function decodeWireTransaction(bytes: Uint8Array): WireTransaction {
  const known = decodedTransactions.get(bytes);
  if (known) return known;
  const transaction = reading((): WireTransaction => {
    const [signatures, messageStart] = signaturesCodec.read(bytes, 0);
    assertMinimal(signaturesCodec.getSizeFromValue(signatures), messageStart);
    const [message, end] = readMessage(bytes, messageStart);
    return { bytes: bytes.subarray(0, end), signatures, message };
  });
  decodedTransactions.set(bytes, transaction);
  decodedTransactions.set(transaction.bytes, transaction);
  return transaction;
}

/** Decodes a serialized message (as `getFeeForMessage` receives it). */
export function decodeWireMessage(bytes: Uint8Array): WireMessage {
  return reading(() => readMessage(bytes, 0)[0]);
}

// Kit types what it encodes as read-only; it is a fresh array, which LiteSVM's binding takes as is.
const writable = (bytes: ReadonlyUint8Array) => bytes as Uint8Array;

/** Serializes a message: the bytes its signatures sign. */
export function encodeWireMessage(message: WireMessage): Uint8Array {
  return writable(messageCodec.encode(message));
}

/** Serializes a transaction from its signatures and its serialized message. */
export function encodeWireTransaction(
  signatures: ReadonlyUint8Array[],
  messageBytes: ReadonlyUint8Array,
): Uint8Array {
  return writable(transactionEncoder.encode({ signatures, messageBytes }));
}

/** The transaction signed as `transaction` is, with another blockhash (simulation's replacement). */
export function withBlockhash(transaction: WireTransaction, blockhash: string): WireTransaction {
  const message = { ...transaction.message, lifetimeToken: blockhash };
  const { signatures } = transaction;
  return { bytes: encodeWireTransaction(signatures, encodeWireMessage(message)), signatures, message };
}

/** The address-table lookups of a message (none in a legacy one). */
export function lookupsOf(message: WireMessage) {
  return message.version === 0 ? (message.addressTableLookups ?? []) : [];
}

/** Whether static key `index` is writable according to the message header. */
export function isStaticKeyWritable(message: WireMessage, index: number): boolean {
  const { numSignerAccounts, numReadonlySignerAccounts, numReadonlyNonSignerAccounts } = message.header;
  if (index < numSignerAccounts) return index < numSignerAccounts - numReadonlySignerAccounts;
  return index < message.staticAccounts.length - numReadonlyNonSignerAccounts;
}
