import { TRANSFER_STATUSES, type TransferStatus } from './transfer.ts';

/**
 * The usage summary's count of each status, named after it. Every status has one, so the counts
 * add up to `totalTransfers`: a transfer counts once, under the status it has now.
 */
export const USAGE_COUNT_FIELDS = {
  quote: 'quoteTransfers',
  awaiting_signature: 'awaitingSignatureTransfers',
  processing: 'processingTransfers',
  completed: 'completedTransfers',
  failed: 'failedTransfers',
  expired: 'expiredTransfers',
  refunded: 'refundedTransfers',
} as const satisfies Record<TransferStatus, string>;

export type UsageCountField = (typeof USAGE_COUNT_FIELDS)[TransferStatus];

export type UsageCounts = { totalTransfers: number } & Record<UsageCountField, number>;

/** The usage counts from the number of transfers in each status (a status left out has none). */
export function usageCounts(byStatus: Partial<Record<TransferStatus, number>>): UsageCounts {
  const counts = { totalTransfers: 0 } as UsageCounts;
  for (const status of TRANSFER_STATUSES) {
    const count = byStatus[status] ?? 0;
    counts[USAGE_COUNT_FIELDS[status]] = count;
    counts.totalTransfers += count;
  }
  return counts;
}
