import { randomBytes } from 'node:crypto';
import type { Owner } from '../domain/integration.ts';
import { TRANSITIONS } from '../domain/lifecycle.ts';
import type { NewQuote } from '../domain/quote.ts';
import {
  FUNDING_STRATEGY,
  type Recovery,
  supportBundleIdFrom,
  type Transfer,
  type TransferStatus,
} from '../domain/transfer.ts';
import { usageCounts } from '../domain/usage.ts';
import { claimExpiredQuotes } from './claims/expired-quotes.ts';
import type { Db, Sql } from './db.ts';
import { appendTransferEvents } from './events.ts';
import { listTransfers, type TransferFilters, type TransferPageRequest } from './transfer-listing.ts';
import { type TransferRow, toTransfer } from './transfer-rows.ts';
import { applyMove, type Reason } from './transitions.ts';

/** The outcome of a create: a new quote, the existing one for a repeated externalId, or a conflict. */
export type CreateQuoteResult =
  | { kind: 'created'; transfer: Transfer }
  | { kind: 'existing'; transfer: Transfer }
  | { kind: 'conflict'; transfer: Transfer };

/** A window of creation times, [from, to); an open end is unbounded. */
interface CreatedWindow {
  from: Date | undefined;
  to: Date | undefined;
}

/** Transfers: quotes, lookups, listing, expiry and usage. */
export function createTransferStore(db: Db) {
  return {
    insertQuote,
    /** The outcome for a create whose externalId may be taken, read before pricing it. */
    matchExternalId: (owner: Owner, externalId: string | null, fingerprint: Buffer) =>
      matchExternalId(db, owner, externalId, fingerprint),
    get: (owner: Owner, id: number) => getTransfer(db, owner, id),
    markRecoverable,
    getByExternalId: (owner: Owner, externalId: string) => getByExternalId(db, owner, externalId),
    /** A page of the listing (src/store/transfer-listing.ts), or null for an unknown cursor. */
    list: (owner: Owner, filters: TransferFilters, page: TransferPageRequest) =>
      listTransfers(db, owner, filters, page),
    expireDue: (now: Date, batchSize: number) => expireDueQuotes(db, now, batchSize),
    usage: (owner: Owner, window: CreatedWindow) => usage(db, owner, window),
    usageByDay: (owner: Owner, window: { from: Date; to: Date }) => usageByDay(db, owner, window),
    tokens: (owner: Owner, mints: readonly string[]) => tokens(db, owner, mints),
  };
}

export type TransferStore = ReturnType<typeof createTransferStore>;

/** Inserts a quote unless its externalId (or, rarely, its support reference) is taken. */
const INSERT_QUOTE_SQL = `
  INSERT INTO transfers (
    integration_id, mode, external_id, support_bundle_id, create_fingerprint, token_mint, token_symbol,
    token_decimals, amount_raw, amount_tokens, source_owner, recipient_wallet, funding_strategy, hops,
    arrival_seconds, token_price_usd, price_source, usd_equivalent, pricing_tier, percent_fee_bps,
    percent_fee_raw, integrator_percent_share_raw, net_delivered_raw, flat_fee_lamports_per_hop,
    total_flat_fee_lamports, integrator_flat_share_lamports, status, phase, quoted_at, expires_at,
    created_at, updated_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
          $21, $22, $23, $24, $25, $26, 'quote', 'quoted', $27, $28, $27, $27)
  ON CONFLICT DO NOTHING
  RETURNING *`;

/**
 * Inserts a quote and its `transfer.quote_created` event in the caller's transaction. A taken
 * externalId answers the existing transfer when the request is the same, a conflict otherwise;
 * a concurrent create with the same externalId waits for the first to commit and then sees it.
 */
async function insertQuote(tx: Sql, owner: Owner, quote: NewQuote): Promise<CreateQuoteResult> {
  for (let attempt = 1; ; attempt++) {
    const { rows } = await tx.query<TransferRow>(INSERT_QUOTE_SQL, [
      owner.integrationId,
      owner.mode,
      quote.externalId,
      supportBundleIdFrom(randomBytes(8)),
      quote.fingerprint,
      quote.tokenMint,
      quote.tokenSymbol,
      quote.tokenDecimals,
      quote.amountRaw.toString(),
      quote.amountTokens,
      quote.sourceOwner,
      quote.recipientWallet,
      FUNDING_STRATEGY,
      quote.hops,
      quote.arrivalSeconds,
      quote.tokenPriceUsd,
      quote.priceSource,
      quote.usdEquivalent,
      quote.pricingTier,
      quote.percentFeeBps,
      quote.percentFeeRaw.toString(),
      quote.integratorPercentShareRaw.toString(),
      quote.netDeliveredRaw.toString(),
      quote.flatFeeLamportsPerHop.toString(),
      quote.totalFlatFeeLamports.toString(),
      quote.integratorFlatShareLamports.toString(),
      quote.quotedAt,
      quote.expiresAt,
    ]);
    if (rows[0]) {
      const transfer = toTransfer(rows[0]);
      await appendTransferEvents(tx, transfer, TRANSITIONS.created.events, quote.quotedAt);
      return { kind: 'created', transfer };
    }
    const taken = await matchExternalId(tx, owner, quote.externalId, quote.fingerprint);
    if (taken) return taken;
    // Otherwise the support reference collided (one in 10^12): draw another.
    if (attempt === 3) throw new Error('no free support reference after 3 draws');
  }
}

/**
 * The outcome for a create whose externalId is already taken (decision C6): the existing
 * transfer when the request is the same, a conflict otherwise; null when the id is free.
 */
async function matchExternalId(
  sql: Sql,
  owner: Owner,
  externalId: string | null,
  fingerprint: Buffer,
): Promise<Exclude<CreateQuoteResult, { kind: 'created' }> | null> {
  if (!externalId) return null;
  const row = await rowByExternalId(sql, owner, externalId);
  if (!row) return null;
  const same = Buffer.from(row.create_fingerprint).equals(fingerprint);
  return { kind: same ? 'existing' : 'conflict', transfer: toTransfer(row) };
}

async function rowByExternalId(sql: Sql, owner: Owner, externalId: string) {
  const { rows } = await sql.query<TransferRow>(
    'SELECT * FROM transfers WHERE integration_id = $1 AND mode = $2 AND external_id = $3',
    [owner.integrationId, owner.mode, externalId],
  );
  return rows[0];
}

/** One transfer of this owner, or null (another owner's id is as unknown as a missing one). */
async function getTransfer(db: Db, owner: Owner, id: number): Promise<Transfer | null> {
  const { rows } = await db.query<TransferRow>(
    'SELECT * FROM transfers WHERE id = $1 AND integration_id = $2 AND mode = $3',
    [id, owner.integrationId, owner.mode],
  );
  return rows[0] ? toTransfer(rows[0]) : null;
}

/**
 * The route cannot proceed (other terms than quoted, abandoned half-deployed, flagged by
 * screening, past its deadline): status `failed`, phase `recoverable`. Returns the transfer as
 * it now is, moved or not (a transfer already past the phases allowed is left as it is).
 */
async function markRecoverable(
  tx: Sql,
  transferId: number,
  input: { lastError: Reason; recovery: Recovery; now: Date },
): Promise<Transfer> {
  const move = { name: 'recoverable', lastError: input.lastError, recovery: input.recovery } as const;
  const moved = await applyMove(tx, transferId, move, input.now);
  if (moved) return moved;
  const { rows } = await tx.query<TransferRow>('SELECT * FROM transfers WHERE id = $1', [transferId]);
  return toTransfer(rows[0]!);
}

/** The transfer of this owner with this externalId, or null. */
async function getByExternalId(db: Db, owner: Owner, externalId: string): Promise<Transfer | null> {
  const row = await rowByExternalId(db, owner, externalId);
  return row ? toTransfer(row) : null;
}

/**
 * Moves quotes whose `expiresAt` has passed to `expired`, with their events, in batches that
 * several workers can share (`SKIP LOCKED`). Returns the transfers expired.
 */
function expireDueQuotes(db: Db, now: Date, batchSize: number): Promise<Transfer[]> {
  return db.transaction(async (tx) => {
    const expired: Transfer[] = [];
    for (const id of await claimExpiredQuotes(tx, now, batchSize)) {
      const transfer = await applyMove(tx, id, { name: 'expired' }, now);
      if (transfer) expired.push(transfer);
    }
    return expired;
  });
}

/**
 * What usage sums, per status of the owner's transfers created in [from, to): how many, and the
 * USD volume of the completed ones. `$5` groups them by another key too (NULL: none).
 */
const USAGE_SQL = `
  SELECT status, count(*) AS count, sum(usd_equivalent) FILTER (WHERE status = 'completed') AS volume_usd,
         date_bin($5::interval, created_at, $3) AS bucket
    FROM transfers
   WHERE integration_id = $1 AND mode = $2
     AND ($3::timestamptz IS NULL OR created_at >= $3) AND ($4::timestamptz IS NULL OR created_at < $4)
   GROUP BY status, bucket`;

type UsageRow = { status: TransferStatus; count: string; volume_usd: number | null; bucket: Date | null };

/** Usage counts and volume from rows of {@link USAGE_SQL}. */
function usageOf(rows: readonly UsageRow[]) {
  const byStatus: Partial<Record<TransferStatus, number>> = {};
  for (const row of rows) byStatus[row.status] = (byStatus[row.status] ?? 0) + Number(row.count);
  return {
    ...usageCounts(byStatus),
    totalVolumeUsd: rows.reduce((sum, row) => sum + (row.volume_usd ?? 0), 0),
  };
}

/** Usage of an owner over transfers created in [from, to): counts and volume (revenue: the rewards ledger). */
async function usage(db: Db, owner: Owner, window: CreatedWindow) {
  const { rows } = await db.query<UsageRow>(USAGE_SQL, [
    owner.integrationId,
    owner.mode,
    window.from ?? null,
    window.to ?? null,
    null,
  ]);
  return usageOf(rows);
}

/**
 * The same usage, day by day (UTC days from `from`, which must be a midnight): one entry per day
 * of [from, to) that has transfers, oldest first.
 */
async function usageByDay(db: Db, owner: Owner, window: { from: Date; to: Date }) {
  const { rows } = await db.query<UsageRow>(USAGE_SQL, [
    owner.integrationId,
    owner.mode,
    window.from,
    window.to,
    '1 day',
  ]);
  const days = new Map<number, UsageRow[]>();
  for (const row of rows) {
    const day = row.bucket!.getTime();
    days.set(day, [...(days.get(day) ?? []), row]);
  }
  return [...days.entries()]
    .sort(([a], [b]) => a - b)
    .map(([day, dayRows]) => ({ day: new Date(day), ...usageOf(dayRows) }));
}

/** A mint as the owner's transfers were quoted with it: its decimals and symbol (if one was given). */
export interface TransferToken {
  mint: string;
  decimals: number;
  symbol: string | null;
}

/** The decimals and symbol of these mints, as the owner's latest transfer of each recorded them. */
async function tokens(db: Db, owner: Owner, mints: readonly string[]): Promise<Map<string, TransferToken>> {
  if (mints.length === 0) return new Map();
  const { rows } = await db.query<{
    token_mint: string;
    token_decimals: number;
    token_symbol: string | null;
  }>(
    `SELECT DISTINCT ON (token_mint) token_mint, token_decimals, token_symbol
       FROM transfers
      WHERE integration_id = $1 AND mode = $2 AND token_mint = ANY ($3::text[])
      ORDER BY token_mint, created_at DESC`,
    [owner.integrationId, owner.mode, [...mints]],
  );
  return new Map(
    rows.map((row) => [
      row.token_mint,
      { mint: row.token_mint, decimals: row.token_decimals, symbol: row.token_symbol },
    ]),
  );
}
