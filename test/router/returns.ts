import {
  getBooleanDecoder,
  getStructDecoder,
  getU8Decoder,
  getU64Decoder,
  padRightDecoder,
  type ReadonlyUint8Array,
} from '@solana/kit';

/*
 * Return data of the router's instructions: the exact amounts each one moved, so the router
 * tests check what happened on chain against the figures computed beforehand.
 */

/** What a Rescue or Reclaim instruction recovered. */
export interface RecoveryReturn {
  /** Tokens moved to the source's token account (base units). */
  tokens: bigint;
  /** Flat fee and screening deposit the route account returned on rescue. */
  refundLamports: bigint;
  /** The route account's lamports when it closed (0 when it stays open). */
  routeLamports: bigint;
  stepLamports: bigint;
  tokenAccountLamports: bigint;
  orchestratorLamports: bigint;
  routeClosed: boolean;
  orchestratorClosed: boolean;
  stepsLeft: number;
  tokenAccountsLeft: number;
}

const u64 = getU64Decoder();
const recoveryDecoder = getStructDecoder([
  ['tokens', u64],
  ['refundLamports', u64],
  ['routeLamports', u64],
  ['stepLamports', u64],
  ['tokenAccountLamports', u64],
  ['orchestratorLamports', u64],
  ['routeClosed', getBooleanDecoder()],
  ['orchestratorClosed', getBooleanDecoder()],
  ['stepsLeft', getU8Decoder()],
  ['tokenAccountsLeft', padRightDecoder(getU8Decoder(), 4)],
]);

/** Decodes the return data of Rescue and Reclaim. */
export function decodeRecoveryReturn(data: ReadonlyUint8Array): RecoveryReturn {
  return recoveryDecoder.decode(data);
}

/** Lamports a Rescue or Reclaim sent to the source, all sources together. */
export function recoveredLamports(r: RecoveryReturn): bigint {
  return (
    r.refundLamports + r.routeLamports + r.stepLamports + r.tokenAccountLamports + r.orchestratorLamports
  );
}

export interface ExecuteStepReturn {
  index: number;
  /** Tokens moved by the step. */
  amount: bigint;
  /** True when this step settled the route (fees paid out). */
  settled: boolean;
}

const executeDecoder = getStructDecoder([
  ['index', u64],
  ['amount', u64],
  ['settled', u64],
]);

/** Decodes the return data of ExecuteStep. */
export function decodeExecuteStepReturn(data: ReadonlyUint8Array): ExecuteStepReturn {
  const raw = executeDecoder.decode(data);
  return { index: Number(raw.index), amount: raw.amount, settled: raw.settled !== 0n };
}

export interface ScreenRouteReturn {
  verdict: 'verified' | 'flagged';
  /** Deposit refunded to the source (verified) or forfeited to the platform (flagged). */
  depositLamports: bigint;
}

/** Decodes the return data of ScreenRoute. */
export function decodeScreenRouteReturn(data: ReadonlyUint8Array): ScreenRouteReturn {
  const raw = getStructDecoder([
    ['verdict', u64],
    ['depositLamports', u64],
  ]).decode(data);
  return { verdict: raw.verdict === 1n ? 'verified' : 'flagged', depositLamports: raw.depositLamports };
}

/** Decodes the return data of CloseOrchestrator: the lamports returned to the source. */
export function decodeCloseOrchestratorReturn(data: ReadonlyUint8Array): bigint {
  return u64.decode(data);
}
