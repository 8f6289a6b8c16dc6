import {
  type AccountMeta,
  AccountRole,
  type AccountSignerMeta,
  type Address,
  address,
  fixDecoderSize,
  getAddressDecoder,
  getAddressEncoder,
  getArrayDecoder,
  getBooleanDecoder,
  getBytesDecoder,
  getI64Decoder,
  getProgramDerivedAddress,
  getStructDecoder,
  getU8Decoder,
  getU16Decoder,
  getU32Decoder,
  getU64Decoder,
  getU64Encoder,
  type Instruction,
  padRightDecoder,
  type ReadonlyUint8Array,
  type TransactionSigner,
} from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';

/*
 * What a wallet needs of the router program to take its funds back on its own: the route and
 * orchestrator accounts (programs/router/state.h), their addresses, the Rescue and Reclaim
 * instructions and what they return (docs/program.md). The layouts do not change between
 * program versions; the service's own copies live apart from this package on purpose.
 */

const ROUTE_ACCOUNT_SIZE = 736;
const ORCHESTRATOR_ACCOUNT_SIZE = 56;
/** A route has at most 10 hops, so at most 9 intermediate token accounts. */
const MAX_INTERMEDIATE_ACCOUNTS = 9;

/** A route's status: `deploying` → `active` → `settled`, or `failed`, `flagged`, `rescued`. */
export type RouteStatus = 'deploying' | 'active' | 'settled' | 'failed' | 'flagged' | 'rescued';
const ROUTE_STATUSES: readonly RouteStatus[] = [
  'deploying',
  'active',
  'settled',
  'failed',
  'flagged',
  'rescued',
];

/** A route account as the program stores it (amounts in base units, times in unix seconds). */
export interface RouteAccount {
  version: number;
  status: RouteStatus;
  /** Steps of the route; it has `hopCount - 1` intermediate token accounts. */
  hopCount: number;
  hopsRegistered: number;
  nextStep: number;
  routeBump: number;
  custodyBump: number;
  screening: number;
  /** Bit i: step state i exists. */
  stepsLive: number;
  /** Bit 0: custody exists; bit i + 1: intermediate account i exists. */
  tokensLive: number;
  /** Counted in the source's orchestrator config (its `openRoutes`). */
  inOrchestrator: boolean;
  /** The transfer's id. */
  routeId: bigint;
  source: Address;
  mint: Address;
  recipient: Address;
  recipientToken: Address;
  /** The service's key that runs the hops; the source funded it. */
  keeper: Address;
  custody: Address;
  platformWallet: Address;
  platformFeeToken: Address;
  integratorWallet: Address;
  integratorFeeToken: Address;
  amount: bigint;
  netAmount: bigint;
  platformFeeTokens: bigint;
  integratorFeeTokens: bigint;
  platformFlatLamports: bigint;
  integratorFlatLamports: bigint;
  depositLamports: bigint;
  createdAt: bigint;
  firstReleaseAt: bigint;
  intervalSecs: bigint;
  /** After this unix time an active route can no longer run and its source may rescue it. */
  deadlineAt: bigint;
  closedAt: bigint;
  /** The intermediate token accounts registered so far, in hop order. */
  hops: Address[];
}

/** A source wallet's orchestrator config: how many of its routes are open. */
export interface OrchestratorAccount {
  source: Address;
  openRoutes: number;
  bump: number;
  routesTotal: bigint;
}

const TAG_SIZE = 8;
const ROUTE_TAG = 'TR\0ROUTE';
const ORCHESTRATOR_TAG = 'TR\0\0ORCH';
const tag = fixDecoderSize(getBytesDecoder(), TAG_SIZE);
const addressDecoder = getAddressDecoder();
const u8 = getU8Decoder();
const u64 = getU64Decoder();
const i64 = getI64Decoder();

const routeDecoder = getStructDecoder([
  ['tag', tag],
  ['version', u8],
  ['status', u8],
  ['hopCount', u8],
  ['hopsRegistered', u8],
  ['nextStep', u8],
  ['routeBump', u8],
  ['custodyBump', u8],
  ['screening', u8],
  ['stepsLive', getU16Decoder()],
  ['tokensLive', getU16Decoder()],
  ['inOrchestrator', padRightDecoder(getBooleanDecoder(), 3)],
  ['routeId', u64],
  ['source', addressDecoder],
  ['mint', addressDecoder],
  ['recipient', addressDecoder],
  ['recipientToken', addressDecoder],
  ['keeper', addressDecoder],
  ['custody', addressDecoder],
  ['platformWallet', addressDecoder],
  ['platformFeeToken', addressDecoder],
  ['integratorWallet', addressDecoder],
  ['integratorFeeToken', addressDecoder],
  ['amount', u64],
  ['netAmount', u64],
  ['platformFeeTokens', u64],
  ['integratorFeeTokens', u64],
  ['platformFlatLamports', u64],
  ['integratorFlatLamports', u64],
  ['depositLamports', u64],
  ['createdAt', i64],
  ['firstReleaseAt', i64],
  ['intervalSecs', i64],
  ['deadlineAt', i64],
  ['closedAt', i64],
  ['hops', getArrayDecoder(addressDecoder, { size: MAX_INTERMEDIATE_ACCOUNTS })],
]);

const orchestratorDecoder = getStructDecoder([
  ['tag', tag],
  ['source', addressDecoder],
  ['openRoutes', getU32Decoder()],
  ['bump', padRightDecoder(u8, 3)],
  ['routesTotal', u64],
]);

/** Whether account data is of the given size and starts with the given type tag. */
function isTagged(data: ReadonlyUint8Array, size: number, expected: string): boolean {
  return (
    data.length === size && new TextDecoder().decode(new Uint8Array(data.slice(0, TAG_SIZE))) === expected
  );
}

/** Decodes a route account's data; null when it is not a route account. */
export function decodeRouteAccount(data: ReadonlyUint8Array): RouteAccount | null {
  if (!isTagged(data, ROUTE_ACCOUNT_SIZE, ROUTE_TAG)) return null;
  const { tag: _, ...raw } = routeDecoder.decode(data);
  const status = ROUTE_STATUSES[raw.status];
  if (status === undefined) return null;
  return { ...raw, status, hops: raw.hops.slice(0, raw.hopsRegistered) };
}

/** Decodes an orchestrator config's data; null when it is not an orchestrator config. */
export function decodeOrchestratorAccount(data: ReadonlyUint8Array): OrchestratorAccount | null {
  if (!isTagged(data, ORCHESTRATOR_ACCOUNT_SIZE, ORCHESTRATOR_TAG)) return null;
  const { tag: _, ...orchestrator } = orchestratorDecoder.decode(data);
  return orchestrator;
}

/** The route's token accounts that still exist, custody first: they close before the step states. */
export function liveTokenAccounts(route: RouteAccount): Address[] {
  return [route.custody, ...route.hops].filter((_, bit) => (route.tokensLive & (1 << bit)) !== 0);
}

const addressBytes = getAddressEncoder();

/** The route of `source` for a transfer: PDA `["route", source, transferId as u64 LE]`. */
export async function findRouteAddress(
  programAddress: Address,
  source: Address,
  transferId: number | bigint,
): Promise<Address> {
  const seeds = ['route', addressBytes.encode(source), getU64Encoder().encode(BigInt(transferId))];
  return (await getProgramDerivedAddress({ programAddress, seeds }))[0];
}

/** The orchestrator config of `source`: PDA `["orchestrator", source]`. */
export async function findOrchestratorAddress(programAddress: Address, source: Address): Promise<Address> {
  return (
    await getProgramDerivedAddress({ programAddress, seeds: ['orchestrator', addressBytes.encode(source)] })
  )[0];
}

/** The step states of a route that still exist, in step order: PDA `["step", route, index as u8]`. */
export async function findLiveStepAddresses(
  programAddress: Address,
  routeAddress: Address,
  route: RouteAccount,
): Promise<Address[]> {
  const indices = Array.from({ length: route.hopCount }, (_, index) => index).filter(
    (index) => (route.stepsLive & (1 << index)) !== 0,
  );
  const seeds = (index: number) => ['step', addressBytes.encode(routeAddress), new Uint8Array([index])];
  return Promise.all(
    indices.map(
      async (index) => (await getProgramDerivedAddress({ programAddress, seeds: seeds(index) }))[0],
    ),
  );
}

/** The native mint: a route on it moves wrapped SOL and delivers SOL. */
export const NATIVE_MINT_ADDRESS = address('So11111111111111111111111111111111111111112');
const RESCUE = 9;
const RECLAIM = 10;
/** Flags bit 0: also close the orchestrator config if no route of the source stays open. */
const CLOSE_ORCHESTRATOR = 1;
/** Accounts a Rescue or Reclaim closes in one transaction, as the service sends them. */
export const MAX_CLOSES_PER_RECOVERY = 12;

/** Which recovery instruction: `rescue` (a route that cannot finish) or `reclaim` (the rent of one that ended). */
export type ChainRecoveryKind = 'rescue' | 'reclaim';

export interface RecoveryInstructionInput {
  kind: ChainRecoveryKind;
  programAddress: Address;
  source: TransactionSigner;
  route: Address;
  orchestrator: Address;
  /** The source's token account of the route's mint: tokens in the closed accounts go there. */
  sourceToken: Address;
  /** Token accounts (first) and step states of the route to close. */
  close: readonly Address[];
  closeOrchestrator: boolean;
}

/**
 * A Rescue (tag 9) or Reclaim (tag 10): accounts [source (s,w), route (w), orchestrator (w),
 * source token (w), Token program, accounts to close (w)…], data [tag, flags].
 */
export function getRecoveryInstruction(input: RecoveryInstructionInput): Instruction {
  const writable = (address: Address): AccountMeta => ({ address, role: AccountRole.WRITABLE });
  const source: AccountSignerMeta = {
    address: input.source.address,
    role: AccountRole.WRITABLE_SIGNER,
    signer: input.source,
  };
  return {
    programAddress: input.programAddress,
    accounts: [
      source,
      writable(input.route),
      writable(input.orchestrator),
      writable(input.sourceToken),
      { address: TOKEN_PROGRAM_ADDRESS, role: AccountRole.READONLY },
      ...input.close.map(writable),
    ],
    data: new Uint8Array([
      input.kind === 'rescue' ? RESCUE : RECLAIM,
      input.closeOrchestrator ? CLOSE_ORCHESTRATOR : 0,
    ]),
  };
}

/** What one Rescue or Reclaim returned (its return data): lamports the source got, by origin. */
export interface RecoveryReturn {
  /** Tokens moved to the source's token account (base units). */
  tokens: bigint;
  /** The flat fee and screening deposit a rescue refunded. */
  refundLamports: bigint;
  /** The route account's lamports, when it closed (0 while accounts of the route are left). */
  routeLamports: bigint;
  stepLamports: bigint;
  /** The rent of the token accounts closed (wrapped SOL's amount goes with the tokens). */
  tokenAccountLamports: bigint;
  orchestratorLamports: bigint;
  routeClosed: boolean;
  orchestratorClosed: boolean;
  stepsLeft: number;
  tokenAccountsLeft: number;
}

const recoveryReturnDecoder = getStructDecoder([
  ['tokens', u64],
  ['refundLamports', u64],
  ['routeLamports', u64],
  ['stepLamports', u64],
  ['tokenAccountLamports', u64],
  ['orchestratorLamports', u64],
  ['routeClosed', getBooleanDecoder()],
  ['orchestratorClosed', getBooleanDecoder()],
  ['stepsLeft', u8],
  ['tokenAccountsLeft', padRightDecoder(u8, 4)],
]);

/** Decodes the return data of Rescue and Reclaim. */
export function decodeRecoveryReturn(data: ReadonlyUint8Array): RecoveryReturn {
  return recoveryReturnDecoder.decode(data);
}
