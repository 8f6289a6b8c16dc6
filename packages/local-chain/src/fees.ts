// The fee a validator charges for a message: 5000 lamports per signature (transaction signatures
// plus those verified by the signature precompiles) and the prioritization fee asked for through
// the Compute Budget program. LiteSVM charges exactly this but does not report it to JavaScript,
// and `getFeeForMessage` needs it before execution. The price per unit asked for is also what
// priority-fees.ts reports.
import {
  COMPUTE_BUDGET_PROGRAM_ADDRESS,
  ComputeBudgetInstruction,
  getSetComputeUnitLimitInstructionDataDecoder,
  getSetComputeUnitPriceInstructionDataDecoder,
} from '@solana-program/compute-budget';
import type { WireMessage } from './wire.ts';

const LAMPORTS_PER_SIGNATURE = 5000n;

const MAX_COMPUTE_UNIT_LIMIT = 1_400_000n;
const DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT = 200_000n;
const MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT = 3_000n;
const MICRO_LAMPORTS_PER_LAMPORT = 1_000_000n;

const PRECOMPILES = new Set<string>([
  'Ed25519SigVerify111111111111111111111111111',
  'KeccakSecp256k11111111111111111111111111111',
  'Secp256r1SigVerify1111111111111111111111111',
]);
// Builtins that keep the small default compute allocation (stake, config and address lookup
// tables have migrated to on-chain programs and count as ordinary programs).
const BUILTINS = new Set<string>([
  COMPUTE_BUDGET_PROGRAM_ADDRESS,
  '11111111111111111111111111111111',
  'Vote111111111111111111111111111111111111111',
  'BPFLoader1111111111111111111111111111111111',
  'BPFLoader2111111111111111111111111111111111',
  'BPFLoaderUpgradeab1e11111111111111111111111',
  'LoaderV411111111111111111111111111111111111',
  'ZkE1Gama1Proof11111111111111111111111111111',
]);
const unitLimitDecoder = getSetComputeUnitLimitInstructionDataDecoder();
const unitPriceDecoder = getSetComputeUnitPriceInstructionDataDecoder();

/** The compute-unit limit (null: none asked for) and price (micro-lamports) a message asks for. */
export function computeBudgetOf(message: WireMessage): { unitLimit: bigint | null; unitPrice: bigint } {
  let unitLimit: bigint | null = null;
  let unitPrice = 0n;
  for (const ix of message.instructions) {
    if (message.staticAccounts[ix.programAddressIndex] !== COMPUTE_BUDGET_PROGRAM_ADDRESS) continue;
    const data = ix.data ?? new Uint8Array(0);
    // Like the runtime, read what the data holds and ignore bytes after it.
    if (data[0] === ComputeBudgetInstruction.SetComputeUnitLimit && data.length >= 5)
      unitLimit = BigInt(unitLimitDecoder.decode(data).units);
    if (data[0] === ComputeBudgetInstruction.SetComputeUnitPrice && data.length >= 9)
      unitPrice = unitPriceDecoder.decode(data).microLamports;
  }
  return { unitLimit, unitPrice };
}

/** Computes the fee of a message (programs are always static keys, so those are all it needs). */
export function computeFee(message: WireMessage): bigint {
  let signatures = BigInt(message.header.numSignerAccounts);
  const { unitLimit, unitPrice } = computeBudgetOf(message);
  let builtinCount = 0n;
  let otherCount = 0n;
  for (const ix of message.instructions) {
    const program = message.staticAccounts[ix.programAddressIndex] ?? '';
    if (PRECOMPILES.has(program)) signatures += BigInt(ix.data?.[0] ?? 0);
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
