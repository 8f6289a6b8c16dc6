import type { Address } from '@solana/kit';
import type { KeyMode } from '../domain/api-keys.ts';
import type {
  Recovery,
  RecoveryKind,
  RouteRecord,
  Transfer,
  TransferPhase,
  TransferSignatures,
  TransferStatus,
} from '../domain/transfer.ts';
import type { ShownTransfer } from '../domain/transfer-view.ts';

/*
 * A transfer's row and its mapping to the domain's Transfer: numeric columns arrive as strings and
 * become bigint; the route columns become `route` once a bundle was prepared.
 */

/** A row of `transfers`, as the drivers return it. */
export type TransferRow = {
  id: string;
  integration_id: string;
  mode: KeyMode;
  external_id: string | null;
  support_bundle_id: string;
  create_fingerprint: Uint8Array;
  token_mint: Address;
  token_symbol: string | null;
  token_decimals: number;
  amount_raw: string;
  amount_tokens: string;
  source_owner: Address;
  recipient_wallet: Address;
  funding_strategy: string;
  hops: number;
  arrival_seconds: number;
  token_price_usd: string;
  price_source: string;
  usd_equivalent: number;
  pricing_tier: string;
  percent_fee_bps: number;
  percent_fee_raw: string;
  integrator_percent_share_raw: string;
  net_delivered_raw: string;
  flat_fee_lamports_per_hop: string;
  total_flat_fee_lamports: string;
  integrator_flat_share_lamports: string;
  status: TransferStatus;
  phase: TransferPhase;
  hops_completed: number;
  last_error: { code: string; message: string; at: string } | null;
  recovery: {
    canRescue: boolean;
    rescuableLamports: string;
    rescuableAccounts: { kind: Recovery['rescuableAccounts'][number]['kind']; lamports: string }[];
    canReclaimRent: boolean;
    reclaimableLamports: string;
  } | null;
  signatures: TransferSignatures;
  recovery_signatures: Record<RecoveryKind, string[]>;
  route_address: Address | null;
  keeper_address: Address | null;
  keeper_funding_lamports: string | null;
  hop_priority_micro_lamports: string | null;
  hop_fees_spent_lamports: string;
  keeper_funding_in_bundle: boolean;
  keeper_funding_signature: string | null;
  orchestrator_signature: string | null;
  prepared_at: Date | null;
  first_release_at: string | null;
  interval_seconds: number | null;
  deadline_at: string | null;
  quoted_at: Date;
  expires_at: Date;
  deposit_received_at: Date | null;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

function toRouteRecord(row: TransferRow): RouteRecord | null {
  if (!row.route_address || !row.keeper_address || !row.prepared_at) return null;
  return {
    address: row.route_address,
    keeper: row.keeper_address,
    keeperFundingLamports: BigInt(row.keeper_funding_lamports!),
    hopPriorityMicroLamports: BigInt(row.hop_priority_micro_lamports!),
    hopFeesSpentLamports: BigInt(row.hop_fees_spent_lamports),
    keeperFundingInBundle: row.keeper_funding_in_bundle,
    keeperFundingSignature: row.keeper_funding_signature,
    orchestratorSignature: row.orchestrator_signature,
    preparedAt: row.prepared_at,
    schedule:
      row.first_release_at === null
        ? null
        : {
            firstReleaseAt: BigInt(row.first_release_at),
            intervalSecs: row.interval_seconds!,
            deadlineAt: BigInt(row.deadline_at!),
          },
  };
}

/** A recovery object as its JSON column holds it (lamports as decimal strings). */
export function recoveryRow(recovery: Recovery): NonNullable<TransferRow['recovery']> {
  return {
    canRescue: recovery.canRescue,
    rescuableLamports: recovery.rescuableLamports.toString(),
    rescuableAccounts: recovery.rescuableAccounts.map((account) => ({
      kind: account.kind,
      lamports: account.lamports.toString(),
    })),
    canReclaimRent: recovery.canReclaimRent,
    reclaimableLamports: recovery.reclaimableLamports.toString(),
  };
}

/**
 * The columns of what the wire shapes show of a transfer ({@link ShownTransfer}): a listing
 * reads these alone, which halves what PostgreSQL sends and the driver parses per row.
 */
const SHOWN_COLUMN_NAMES = [
  'id',
  'mode',
  'external_id',
  'support_bundle_id',
  'token_mint',
  'token_symbol',
  'amount_raw',
  'amount_tokens',
  'source_owner',
  'recipient_wallet',
  'funding_strategy',
  'hops',
  'arrival_seconds',
  'pricing_tier',
  'percent_fee_bps',
  'total_flat_fee_lamports',
  'status',
  'phase',
  'hops_completed',
  'last_error',
  'recovery',
  'signatures',
  'quoted_at',
  'expires_at',
  'deposit_received_at',
  'completed_at',
  'created_at',
] as const satisfies readonly (keyof TransferRow)[];

/** The part of a row that {@link toShownTransfer} reads. */
export type ShownColumns = Pick<TransferRow, (typeof SHOWN_COLUMN_NAMES)[number]>;

/** {@link ShownColumns} as a select list. */
export const SHOWN_COLUMNS = SHOWN_COLUMN_NAMES.join(', ');

/** What the wire shapes show of a transfer, from its row. */
export function toShownTransfer(row: ShownColumns): ShownTransfer {
  return {
    id: Number(row.id),
    mode: row.mode,
    externalId: row.external_id,
    supportBundleId: row.support_bundle_id,
    tokenMint: row.token_mint,
    tokenSymbol: row.token_symbol,
    amountRaw: BigInt(row.amount_raw),
    amountTokens: row.amount_tokens,
    sourceOwner: row.source_owner,
    recipientWallet: row.recipient_wallet,
    fundingStrategy: row.funding_strategy,
    hops: row.hops,
    arrivalSeconds: row.arrival_seconds,
    pricingTier: row.pricing_tier,
    percentFeeBps: row.percent_fee_bps,
    totalFlatFeeLamports: BigInt(row.total_flat_fee_lamports),
    status: row.status,
    phase: row.phase,
    hopsCompleted: row.hops_completed,
    lastError: row.last_error
      ? { code: row.last_error.code, message: row.last_error.message, at: new Date(row.last_error.at) }
      : null,
    recovery: row.recovery
      ? {
          canRescue: row.recovery.canRescue,
          rescuableLamports: BigInt(row.recovery.rescuableLamports),
          rescuableAccounts: row.recovery.rescuableAccounts.map((account) => ({
            kind: account.kind,
            lamports: BigInt(account.lamports),
          })),
          canReclaimRent: row.recovery.canReclaimRent,
          reclaimableLamports: BigInt(row.recovery.reclaimableLamports),
        }
      : null,
    signatures: row.signatures,
    quotedAt: row.quoted_at,
    expiresAt: row.expires_at,
    depositReceivedAt: row.deposit_received_at,
    completedAt: row.completed_at,
    createdAt: row.created_at,
  };
}

/** The domain's Transfer of a row. */
export function toTransfer(row: TransferRow): Transfer {
  return {
    ...toShownTransfer(row),
    integrationId: Number(row.integration_id),
    tokenDecimals: row.token_decimals,
    tokenPriceUsd: row.token_price_usd,
    priceSource: row.price_source,
    usdEquivalent: row.usd_equivalent,
    percentFeeRaw: BigInt(row.percent_fee_raw),
    integratorPercentShareRaw: BigInt(row.integrator_percent_share_raw),
    netDeliveredRaw: BigInt(row.net_delivered_raw),
    flatFeeLamportsPerHop: BigInt(row.flat_fee_lamports_per_hop),
    integratorFlatShareLamports: BigInt(row.integrator_flat_share_lamports),
    route: toRouteRecord(row),
    updatedAt: row.updated_at,
  };
}
