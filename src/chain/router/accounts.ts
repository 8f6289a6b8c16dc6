import {
  type Address,
  address,
  type Decoder,
  fixDecoderSize,
  getAddressDecoder,
  getArrayDecoder,
  getBooleanDecoder,
  getBytesDecoder,
  getI64Decoder,
  getStructDecoder,
  getU8Decoder,
  getU16Decoder,
  getU32Decoder,
  getU64Decoder,
  padRightDecoder,
  type ReadonlyUint8Array,
} from '@solana/kit';
import { getTokenSize } from '@solana-program/token';

/*
 * Account layouts of the router program (programs/router/state.h), decoded with kit codecs.
 * Sizes are what the program allocates; the fee estimate's rent figures come from them.
 */

export const CONFIG_ACCOUNT_SIZE = 120;
export const ORCHESTRATOR_ACCOUNT_SIZE = 56;
export const ROUTE_ACCOUNT_SIZE = 736;
export const STEP_ACCOUNT_SIZE = 72;
/** SPL Token account: the custody account and every intermediate account. */
export const TOKEN_ACCOUNT_SIZE = getTokenSize();

/** The native mint (wrapped SOL): a route on it delivers native SOL to the recipient's wallet. */
export const NATIVE_MINT_ADDRESS = address('So11111111111111111111111111111111111111112');

/** Whether a route on `mint` unwraps at settlement (no recipient token account). */
export function isNativeMint(mint: string): boolean {
  return mint === NATIVE_MINT_ADDRESS;
}

export const MIN_HOPS = 3;
export const MAX_HOPS = 10;

/** What the program stores for "no account" (a native route's recipient token account). */
export const ZERO_ADDRESS = address('11111111111111111111111111111111');

const TAGS = {
  config: 'TRCONFIG',
  orchestrator: 'TR\0\0ORCH',
  route: 'TR\0ROUTE',
  step: 'TR\0\0STEP',
} as const;
type AccountKind = keyof typeof TAGS;

export type RouteStatus = 'deploying' | 'active' | 'settled' | 'failed' | 'flagged' | 'rescued';
export const ROUTE_STATUSES: readonly RouteStatus[] = [
  'deploying',
  'active',
  'settled',
  'failed',
  'flagged',
  'rescued',
];

export type ScreeningState = 'none' | 'pending' | 'verified' | 'flagged';
export const SCREENING_STATES: readonly ScreeningState[] = ['none', 'pending', 'verified', 'flagged'];

export interface RouterConfig {
  admin: Address;
  screeningAuthority: Address;
  platformWallet: Address;
  screeningDepositLamports: bigint;
  bump: number;
}

export interface Orchestrator {
  source: Address;
  openRoutes: number;
  bump: number;
  routesTotal: bigint;
}

export interface Route {
  version: number;
  status: RouteStatus;
  /** Steps of the route; it has hopCount - 1 intermediate token accounts. */
  hopCount: number;
  hopsRegistered: number;
  nextStep: number;
  routeBump: number;
  custodyBump: number;
  screening: ScreeningState;
  /** Bit i: step state i exists. */
  stepsLive: number;
  /** Bit 0: custody exists; bit i + 1: intermediate account i exists. */
  tokensLive: number;
  inOrchestrator: boolean;
  routeId: bigint;
  source: Address;
  mint: Address;
  recipient: Address;
  /** The recipient's token account; null on a native-mint route (its wallet receives SOL). */
  recipientToken: Address | null;
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
  deadlineAt: bigint;
  closedAt: bigint;
  /** Intermediate token accounts registered so far, in hop order. */
  hops: Address[];
}

export type StepStatus = 'pending' | 'executed';

export interface Step {
  route: Address;
  index: number;
  bump: number;
  status: StepStatus;
  executedAt: bigint;
  amount: bigint;
  slot: bigint;
}

const tag = fixDecoderSize(getBytesDecoder(), 8);
const addressDecoder = getAddressDecoder();
const u8 = getU8Decoder();
const u16 = getU16Decoder();
const u64 = getU64Decoder();
const i64 = getI64Decoder();

const configDecoder = getStructDecoder([
  ['tag', tag],
  ['admin', addressDecoder],
  ['screeningAuthority', addressDecoder],
  ['platformWallet', addressDecoder],
  ['screeningDepositLamports', u64],
  ['bump', padRightDecoder(u8, 7)],
]);

const orchestratorDecoder = getStructDecoder([
  ['tag', tag],
  ['source', addressDecoder],
  ['openRoutes', getU32Decoder()],
  ['bump', padRightDecoder(u8, 3)],
  ['routesTotal', u64],
]);

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
  ['stepsLive', u16],
  ['tokensLive', u16],
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
  ['hops', getArrayDecoder(addressDecoder, { size: MAX_HOPS - 1 })],
]);

const stepDecoder = getStructDecoder([
  ['tag', tag],
  ['route', addressDecoder],
  ['index', u8],
  ['bump', u8],
  ['status', padRightDecoder(u8, 5)],
  ['executedAt', i64],
  ['amount', u64],
  ['slot', u64],
]);

function decodeTagged<T extends { tag: ReadonlyUint8Array }>(
  decoder: Decoder<T>,
  data: ReadonlyUint8Array,
  size: number,
  kind: AccountKind,
): Omit<T, 'tag'> {
  if (data.length !== size)
    throw new Error(`expected ${size} bytes of ${kind} account data, got ${data.length}`);
  const { tag: found, ...rest } = decoder.decode(data);
  if (new TextDecoder().decode(new Uint8Array(found)) !== TAGS[kind])
    throw new Error(`not a ${kind} account`);
  return rest;
}

function byIndex<T>(values: readonly T[], index: number, what: string): T {
  const value = values[index];
  if (value === undefined) throw new Error(`unknown ${what} ${index}`);
  return value;
}

/** Decodes the protocol config account. */
export function decodeRouterConfig(data: ReadonlyUint8Array): RouterConfig {
  return decodeTagged(configDecoder, data, CONFIG_ACCOUNT_SIZE, 'config');
}

/** Decodes an orchestrator config account. */
export function decodeOrchestrator(data: ReadonlyUint8Array): Orchestrator {
  return decodeTagged(orchestratorDecoder, data, ORCHESTRATOR_ACCOUNT_SIZE, 'orchestrator');
}

/** Decodes a route account. */
export function decodeRoute(data: ReadonlyUint8Array): Route {
  const raw = decodeTagged(routeDecoder, data, ROUTE_ACCOUNT_SIZE, 'route');
  return {
    ...raw,
    recipientToken: raw.recipientToken === ZERO_ADDRESS ? null : raw.recipientToken,
    status: byIndex(ROUTE_STATUSES, raw.status, 'route status'),
    screening: byIndex(SCREENING_STATES, raw.screening, 'screening state'),
    hops: raw.hops.slice(0, raw.hopsRegistered),
  };
}

/** Decodes a step state account. */
export function decodeStep(data: ReadonlyUint8Array): Step {
  const raw = decodeTagged(stepDecoder, data, STEP_ACCOUNT_SIZE, 'step');
  return { ...raw, status: byIndex(['pending', 'executed'] as const, raw.status, 'step status') };
}

/**
 * The account that holds a route's net amount before step `index`: custody, the intermediate
 * accounts, and for `hopCount` the recipient's token account (its wallet on a native-mint route).
 */
export function routeHolder(route: Route, index: number): Address {
  if (index === 0) return route.custody;
  if (index === route.hopCount) return route.recipientToken ?? route.recipient;
  const hop = route.hops[index - 1];
  if (!hop) throw new Error(`hop ${index - 1} is not registered`);
  return hop;
}

/** When step `index` of a route becomes due (unix seconds). */
export function stepReleaseAt(route: Route, index: number): bigint {
  return route.firstReleaseAt + BigInt(index) * route.intervalSecs;
}
