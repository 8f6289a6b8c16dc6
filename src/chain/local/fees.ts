// The fee a validator charges for a message: 5000 lamports per signature (transaction signatures
// plus those verified by the signature precompiles) and the prioritization fee asked for through
// the Compute Budget program. LiteSVM charges exactly this but does not report it to JavaScript,
// and `getFeeForMessage` needs it before execution.
import { keyOf, keyOfAddress } from '../keys.ts';
import type { WireMessage } from './wire.ts';

const LAMPORTS_PER_SIGNATURE = 5000n;

const MAX_COMPUTE_UNIT_LIMIT = 1_400_000n;
const DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT = 200_000n;
const MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT = 3_000n;
const MICRO_LAMPORTS_PER_LAMPORT = 1_000_000n;

const COMPUTE_BUDGET = keyOfAddress('ComputeBudget111111111111111111111111111111');
const PRECOMPILES = new Set(
  [
    'Ed25519SigVerify111111111111111111111111111',
    'KeccakSecp256k11111111111111111111111111111',
    'Secp256r1SigVerify1111111111111111111111111',
  ].map(keyOfAddress),
);
// Builtins that keep the small default compute allocation (stake, config and address lookup
// tables have migrated to on-chain programs and count as ordinary programs).
const BUILTINS = new Set([
  COMPUTE_BUDGET,
  ...[
    '11111111111111111111111111111111',
    'Vote111111111111111111111111111111111111111',
    'BPFLoader1111111111111111111111111111111111',
    'BPFLoader2111111111111111111111111111111111',
    'BPFLoaderUpgradeab1e11111111111111111111111',
    'LoaderV411111111111111111111111111111111111',
    'ZkE1Gama1Proof11111111111111111111111111111',
  ].map(keyOfAddress),
]);

function readU32(data: Uint8Array, at: number): bigint {
  return (
    BigInt((data[at] as number) | ((data[at + 1] as number) << 8) | ((data[at + 2] as number) << 16)) +
    BigInt(data[at + 3] as number) * 16777216n
  );
}

function readU64(data: Uint8Array, at: number): bigint {
  return readU32(data, at) + readU32(data, at + 4) * 4294967296n;
}

/** Computes the fee of a message whose account keys (static, then loaded) are `keys`. */
export function computeFee(message: WireMessage, keys: readonly Uint8Array[]): bigint {
  let signatures = BigInt(message.numRequiredSignatures);
  let unitLimit: bigint | null = null;
  let unitPrice = 0n;
  let builtinCount = 0n;
  let otherCount = 0n;
  for (const ix of message.instructions) {
    const key = keys[ix.programIdIndex];
    const program = key ? keyOf(key) : '';
    if (PRECOMPILES.has(program)) signatures += BigInt(ix.data[0] ?? 0);
    if (program === COMPUTE_BUDGET) {
      const kind = ix.data[0];
      if (kind === 2 && ix.data.length >= 5) unitLimit = readU32(ix.data, 1);
      if (kind === 3 && ix.data.length >= 9) unitPrice = readU64(ix.data, 1);
    }
    if (BUILTINS.has(program)) builtinCount++;
    else otherCount++;
  }
  let limit =
    unitLimit ??
    builtinCount * MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT +
      otherCount * DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT;
  if (limit > MAX_COMPUTE_UNIT_LIMIT) limit = MAX_COMPUTE_UNIT_LIMIT;
  const priority = (unitPrice * limit + MICRO_LAMPORTS_PER_LAMPORT - 1n) / MICRO_LAMPORTS_PER_LAMPORT;
  return signatures * LAMPORTS_PER_SIGNATURE + priority;
}
