import type { Address } from '@solana/kit';
import type { KeyMode } from './api-keys.ts';
import { AppError } from './errors.ts';
import type { RouteSchedule } from './route.ts';

/** Status values of the API. */
export const TRANSFER_STATUSES = [
  'quote',
  'awaiting_signature',
  'processing',
  'completed',
  'failed',
  'expired',
  'refunded',
] as const;
export type TransferStatus = (typeof TRANSFER_STATUSES)[number];

/** Phase values: finer-grained, derived from on-chain state. */
export const TRANSFER_PHASES = [
  'quoted',
  'funding',
  'deploying',
  'executing',
  'settled',
  'failed',
  'recoverable',
  'expired',
  'rescued',
  'reclaimed',
] as const;
export type TransferPhase = (typeof TRANSFER_PHASES)[number];

/** Event types webhook endpoints can subscribe to. */
export const EVENT_TYPES = [
  'transfer.quote_created',
  'transfer.deposit_confirmed',
  'transfer.processing',
  'transfer.hop_complete',
  'transfer.completed',
  'transfer.failed',
  'transfer.expired',
  'transfer.refunded',
  'transfer.phase_changed',
  'transfer.recoverable',
  'transfer.rescued',
  'transfer.rent_reclaimed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The one strategy today: the client signs the prepared bundle. */
export const FUNDING_STRATEGY = 'signed_bundle';

/** Kinds of on-chain accounts whose lamports a recovery returns. */
export type RecoveryAccountKind = 'route_pda' | 'step_state' | 'orchestrator_config' | 'keeper' | 'ata';

export interface Recovery {
  canRescue: boolean;
  rescuableLamports: bigint;
  rescuableAccounts: { kind: RecoveryAccountKind; lamports: bigint }[];
  canReclaimRent: boolean;
  reclaimableLamports: bigint;
}

export interface LastError {
  code: string;
  message: string;
  at: Date;
}

export interface TransferSignatures {
  routeInit: string[];
  sessionInit: string[];
  hops: string[];
}

/**
 * A transfer's route once a bundle was prepared: its address, its own keeper and the keeper's
 * funding, what the source reported, and the schedule read back from the chain at takeover.
 */
export interface RouteRecord {
  address: Address;
  keeper: Address;
  keeperFundingLamports: bigint;
  /** The compute-unit price the keeper's fee budget pays each hop at (src/domain/priority-fees.ts). */
  hopPriorityMicroLamports: bigint;
  /** What the keeper's transactions that landed on the route paid in fees so far. */
  hopFeesSpentLamports: bigint;
  /** A prepared bundle asked the source to fund the keeper (so its signature must be reported). */
  keeperFundingInBundle: boolean;
  keeperFundingSignature: string | null;
  orchestratorSignature: string | null;
  preparedAt: Date;
  schedule: RouteSchedule | null;
}

/** A transfer as the service knows it. Money in bigint base units. */
export interface Transfer {
  id: number;
  integrationId: number;
  mode: KeyMode;
  externalId: string | null;
  supportBundleId: string;
  tokenMint: Address;
  tokenSymbol: string | null;
  tokenDecimals: number;
  amountRaw: bigint;
  amountTokens: string;
  sourceOwner: Address;
  recipientWallet: Address;
  fundingStrategy: string;
  hops: number;
  arrivalSeconds: number;
  tokenPriceUsd: string;
  priceSource: string;
  usdEquivalent: number;
  pricingTier: string;
  percentFeeBps: number;
  percentFeeRaw: bigint;
  integratorPercentShareRaw: bigint;
  netDeliveredRaw: bigint;
  flatFeeLamportsPerHop: bigint;
  totalFlatFeeLamports: bigint;
  integratorFlatShareLamports: bigint;
  status: TransferStatus;
  phase: TransferPhase;
  hopsCompleted: number;
  lastError: LastError | null;
  recovery: Recovery | null;
  signatures: TransferSignatures;
  /** Null until the first prepare. */
  route: RouteRecord | null;
  quotedAt: Date;
  expiresAt: Date;
  depositReceivedAt: Date | null;
  completedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Phases in which `recovery` is reported (decision C1); null in every other phase. */
const RECOVERY_PHASES: ReadonlySet<TransferPhase> = new Set([
  'failed',
  'recoverable',
  'settled',
  'rescued',
  'reclaimed',
]);

/** Whether the transfer's `recovery` object is populated in this phase. */
export function reportsRecovery(phase: TransferPhase): boolean {
  return RECOVERY_PHASES.has(phase);
}

/** The recovery operations of the API: rescue of a route that cannot finish, rent reclaim after it ended. */
export type RecoveryKind = 'rescue' | 'reclaim';

/**
 * Phases that allow each recovery operation (MH_080 in any other): rescue when the route cannot
 * finish (contract); reclaim after settlement, and after a rescue or an earlier reclaim for what
 * reached the route's accounts or its keeper since (nothing is left in an account the source
 * paid for).
 */
const RECOVERY_OPERATION_PHASES: Record<RecoveryKind, ReadonlySet<TransferPhase>> = {
  rescue: new Set(['failed', 'recoverable']),
  reclaim: new Set(['settled', 'rescued', 'reclaimed']),
};

/** Whether `kind` is allowed in this phase. */
export function allowsRecovery(kind: RecoveryKind, phase: TransferPhase): boolean {
  return RECOVERY_OPERATION_PHASES[kind].has(phase);
}

/**
 * The recovery figures as the API shows them in a phase: an operation the phase does not allow
 * shows as impossible and returning nothing, so `canRescue` and `canReclaimRent` say exactly
 * whether the endpoint would build a bundle (the chain alone would also allow reclaiming a
 * half-rescued route, which the API finishes with rescue).
 */
export function recoveryInPhase(recovery: Recovery, phase: TransferPhase): Recovery {
  const rescue = allowsRecovery('rescue', phase);
  const reclaim = allowsRecovery('reclaim', phase);
  return {
    canRescue: rescue && recovery.canRescue,
    rescuableLamports: rescue ? recovery.rescuableLamports : 0n,
    rescuableAccounts: rescue ? recovery.rescuableAccounts : [],
    canReclaimRent: reclaim && recovery.canReclaimRent,
    reclaimableLamports: reclaim ? recovery.reclaimableLamports : 0n,
  };
}

/**
 * A quote, prepared or not, can no longer be deployed once `expiresAt` has passed (what is on
 * chain by then is taken over, expired or made recoverable by the service).
 */
export function isExpiredQuote(transfer: Pick<Transfer, 'status' | 'expiresAt'>, now: Date): boolean {
  return (
    (transfer.status === 'quote' || transfer.status === 'awaiting_signature') &&
    transfer.expiresAt.getTime() <= now.getTime()
  );
}

/**
 * Refuses any further use of an expired transfer with MH_034, including a quote whose `expiresAt`
 * has passed before the expiry worker got to it.
 */
export function assertNotExpired(transfer: Pick<Transfer, 'id' | 'status' | 'expiresAt'>, now: Date): void {
  if (transfer.status === 'expired' || isExpiredQuote(transfer, now)) throw expiredError(transfer);
}

/** MH_034 for a transfer whose quote expired. */
export function expiredError(transfer: Pick<Transfer, 'id' | 'expiresAt'>): AppError {
  return new AppError(
    'MH_034',
    `Transfer ${transfer.id} expired at ${transfer.expiresAt.toISOString()}. Create a new transfer for a fresh quote.`,
    { param: 'transferId' },
  );
}

const SUPPORT_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZ';

/**
 * A support reference a person can read over the phone: `TR-` and two groups of four characters
 * from an alphabet without look-alikes (no 0/O, 1/I).
 */
export function supportBundleIdFrom(random: Uint8Array): string {
  if (random.length < 8) throw new RangeError('need 8 random bytes');
  let text = '';
  for (let index = 0; index < 8; index++) text += SUPPORT_ALPHABET[random[index]! % SUPPORT_ALPHABET.length];
  return `TR-${text.slice(0, 4)}-${text.slice(4)}`;
}
