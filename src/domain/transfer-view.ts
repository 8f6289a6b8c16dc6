import { recoveryInPhase, reportsRecovery, type Transfer } from './transfer.ts';

/**
 * The wire shapes of a transfer. Raw token amounts are decimal strings; lamport figures are JSON
 * integers as the contract says (checked: a value beyond 2^53 would be an error, never a silent
 * rounding).
 */

/** Lamports as a JSON integer, refusing values a JSON number cannot hold exactly. */
export function lamportsToJson(lamports: bigint): number {
  if (lamports > BigInt(Number.MAX_SAFE_INTEGER) || lamports < 0n) {
    throw new RangeError(`lamport figure ${lamports} cannot be represented exactly as a JSON integer`);
  }
  return Number(lamports);
}

/** What the wire shapes show of a transfer: all that a listing reads of one. */
export type ShownTransfer = Pick<
  Transfer,
  | 'id'
  | 'mode'
  | 'externalId'
  | 'supportBundleId'
  | 'tokenMint'
  | 'tokenSymbol'
  | 'amountRaw'
  | 'amountTokens'
  | 'sourceOwner'
  | 'recipientWallet'
  | 'fundingStrategy'
  | 'hops'
  | 'arrivalSeconds'
  | 'pricingTier'
  | 'percentFeeBps'
  | 'totalFlatFeeLamports'
  | 'status'
  | 'phase'
  | 'hopsCompleted'
  | 'lastError'
  | 'recovery'
  | 'signatures'
  | 'quotedAt'
  | 'expiresAt'
  | 'depositReceivedAt'
  | 'completedAt'
  | 'createdAt'
>;

/** The quote-time fields: what the create call returns. */
export function quoteView(transfer: ShownTransfer) {
  return {
    id: transfer.id,
    externalId: transfer.externalId,
    supportBundleId: transfer.supportBundleId,
    tokenMint: transfer.tokenMint,
    tokenSymbol: transfer.tokenSymbol,
    amountRaw: transfer.amountRaw.toString(),
    amountTokens: transfer.amountTokens,
    sourceOwner: transfer.sourceOwner,
    recipientWallet: transfer.recipientWallet,
    fundingStrategy: transfer.fundingStrategy,
    hops: transfer.hops,
    arrivalSeconds: transfer.arrivalSeconds,
    pricingTier: transfer.pricingTier,
    percentFeeBps: transfer.percentFeeBps,
    totalFlatFeeLamports: lamportsToJson(transfer.totalFlatFeeLamports),
    status: transfer.status,
    isTest: transfer.mode === 'test',
    quotedAt: transfer.quotedAt.toISOString(),
    depositReceivedAt: transfer.depositReceivedAt?.toISOString() ?? null,
    completedAt: transfer.completedAt?.toISOString() ?? null,
    expiresAt: transfer.expiresAt.toISOString(),
    createdAt: transfer.createdAt.toISOString(),
  };
}

/** The extended shape the get operations, lists and event payloads show. */
export function transferView(transfer: ShownTransfer) {
  const recovery =
    reportsRecovery(transfer.phase) && transfer.recovery
      ? recoveryInPhase(transfer.recovery, transfer.phase)
      : null;
  return {
    ...quoteView(transfer),
    phase: transfer.phase,
    progress: { hopsCompleted: transfer.hopsCompleted, hopsTotal: transfer.hops },
    lastError: transfer.lastError
      ? {
          code: transfer.lastError.code,
          message: transfer.lastError.message,
          at: transfer.lastError.at.toISOString(),
        }
      : null,
    recovery: recovery
      ? {
          canRescue: recovery.canRescue,
          rescuableLamports: lamportsToJson(recovery.rescuableLamports),
          rescuableAccounts: recovery.rescuableAccounts.map((account) => ({
            kind: account.kind,
            lamports: lamportsToJson(account.lamports),
          })),
          canReclaimRent: recovery.canReclaimRent,
          reclaimableLamports: lamportsToJson(recovery.reclaimableLamports),
        }
      : reportsRecovery(transfer.phase)
        ? {
            canRescue: false,
            rescuableLamports: 0,
            rescuableAccounts: [],
            canReclaimRent: false,
            reclaimableLamports: 0,
          }
        : null,
    signatures: {
      routeInit: [...transfer.signatures.routeInit],
      sessionInit: [...transfer.signatures.sessionInit],
      hops: [...transfer.signatures.hops],
    },
  };
}

export type QuoteView = ReturnType<typeof quoteView>;
export type TransferView = ReturnType<typeof transferView>;
