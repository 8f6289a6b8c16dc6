import { randomBytes } from 'node:crypto';
import type { KeyMode } from '../domain/api-keys.ts';
import {
  FUNDING_STRATEGY,
  type LastError,
  type Recovery,
  supportBundleIdFrom,
  type Transfer,
  type TransferPhase,
  type TransferSignatures,
  type TransferStatus,
} from '../domain/transfer.ts';
import { createBatcher } from './batcher.ts';
import type { Db } from './db.ts';
import { outboxParams, outboxSql } from './events.ts';
import { completionParams, completionSql } from './idempotency.ts';
import { createNotifiedCache } from './notified-cache.ts';
import { readPage } from './paging.ts';
import type { SecretBox } from './secret-box.ts';

/** The owner of an object: an integration in one mode. Every read and write is scoped by it. */
export interface Owner {
  integrationId: number;
  mode: KeyMode;
}

/** What a create call decided, priced and validated. */
export type NewQuote = Pick<
  Transfer,
  | 'externalId'
  | 'tokenMint'
  | 'tokenSymbol'
  | 'tokenDecimals'
  | 'amountRaw'
  | 'amountTokens'
  | 'sourceOwner'
  | 'recipientWallet'
  | 'hops'
  | 'arrivalSeconds'
  | 'tokenPriceUsd'
  | 'priceSource'
  | 'usdEquivalent'
  | 'pricingTier'
  | 'percentFeeBps'
  | 'percentFeeRaw'
  | 'integratorPercentShareRaw'
  | 'netDeliveredRaw'
  | 'flatFeeLamportsPerHop'
  | 'totalFlatFeeLamports'
  | 'integratorFlatShareLamports'
  | 'quotedAt'
  | 'expiresAt'
> & {
  /** What makes two creates with one externalId "the same" (decision C6). */
  fingerprint: Buffer;
};

/**
 * The idempotency record a create completes in its own statement: the claimed key and the exact
 * response its request answers with, made from the created transfer.
 */
export interface IdempotencyCompletion {
  scope: string;
  key: string;
  now: Date;
  responseFor(transfer: Transfer): { status: number; body: string };
}

type QuoteInsert = { owner: Owner; quote: NewQuote; completion?: IdempotencyCompletion | undefined };

/** The outcome of a create: a new quote, the existing one for a repeated externalId, or a conflict. */
export type CreateQuoteResult =
  | { kind: 'created'; transfer: Transfer }
  | { kind: 'existing'; transfer: Transfer }
  | { kind: 'conflict'; transfer: Transfer };

export interface TransferFilters {
  status?: TransferStatus | undefined;
  fromDate?: Date | undefined;
  toDate?: Date | undefined;
  externalId?: string | undefined;
  supportBundleId?: string | undefined;
}

type TransferRow = {
  id: string;
  integration_id: string;
  mode: KeyMode;
  external_id: string | null;
  support_bundle_id: string;
  create_fingerprint: Uint8Array;
  token_mint: string;
  token_symbol: string | null;
  token_decimals: number;
  amount_raw: string;
  amount_tokens: string;
  source_owner: string;
  recipient_wallet: string;
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
  quoted_at: Date;
  expires_at: Date;
  deposit_received_at: Date | null;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

function toTransfer(row: TransferRow): Transfer {
  const lastError: LastError | null = row.last_error
    ? { code: row.last_error.code, message: row.last_error.message, at: new Date(row.last_error.at) }
    : null;
  const recovery: Recovery | null = row.recovery
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
    : null;
  return {
    id: Number(row.id),
    integrationId: Number(row.integration_id),
    mode: row.mode,
    externalId: row.external_id,
    supportBundleId: row.support_bundle_id,
    tokenMint: row.token_mint,
    tokenSymbol: row.token_symbol,
    tokenDecimals: row.token_decimals,
    amountRaw: BigInt(row.amount_raw),
    amountTokens: row.amount_tokens,
    sourceOwner: row.source_owner,
    recipientWallet: row.recipient_wallet,
    fundingStrategy: row.funding_strategy,
    hops: row.hops,
    arrivalSeconds: row.arrival_seconds,
    tokenPriceUsd: row.token_price_usd,
    priceSource: row.price_source,
    usdEquivalent: row.usd_equivalent,
    pricingTier: row.pricing_tier,
    percentFeeBps: row.percent_fee_bps,
    percentFeeRaw: BigInt(row.percent_fee_raw),
    integratorPercentShareRaw: BigInt(row.integrator_percent_share_raw),
    netDeliveredRaw: BigInt(row.net_delivered_raw),
    flatFeeLamportsPerHop: BigInt(row.flat_fee_lamports_per_hop),
    totalFlatFeeLamports: BigInt(row.total_flat_fee_lamports),
    integratorFlatShareLamports: BigInt(row.integrator_flat_share_lamports),
    status: row.status,
    phase: row.phase,
    hopsCompleted: row.hops_completed,
    lastError,
    recovery,
    signatures: row.signatures,
    quotedAt: row.quoted_at,
    expiresAt: row.expires_at,
    depositReceivedAt: row.deposit_received_at,
    completedAt: row.completed_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const UNIQUE_VIOLATION = '23505';
const isUniqueViolation = (error: unknown, constraint: string) =>
  (error as { code?: string }).code === UNIQUE_VIOLATION &&
  String(
    (error as { constraint?: string; message?: string }).constraint ?? (error as Error).message,
  ).includes(constraint);

const ID_BLOCK = 64;

/**
 * Hands out transfer ids drawn from the table's sequence in blocks, so a create needs no round
 * trip for its id: the next block is fetched while half of the current one is still left. Ids
 * stay unique across processes; like any sequence, they may have gaps.
 */
function createIdAllocator(db: Db) {
  const available: number[] = [];
  let refilling: Promise<void> | undefined;
  const refill = () => {
    refilling ??= db
      .query<{ id: string }>(
        `SELECT nextval(pg_get_serial_sequence('transfers', 'id')) AS id FROM generate_series(1, $1)`,
        [ID_BLOCK],
      )
      .then(({ rows }) => {
        available.push(...rows.map((row) => Number(row.id)));
      })
      .finally(() => {
        refilling = undefined;
      });
    return refilling;
  };
  return async function next(): Promise<number> {
    while (available.length === 0) await refill();
    // A failed early refill is retried by the next caller; this one already has its id.
    if (available.length <= ID_BLOCK / 2) refill().catch(() => {});
    return available.shift()!;
  };
}

/** NOTIFY channel on which the database announces every changed transfer (payload: its id). */
export const TRANSFER_CHANGED_CHANNEL = 'tr_transfer_changed';

/**
 * Transfers: quotes, lookups, listing, expiry and usage. Reads by id may be served from a
 * per-process cache that every change evicts in every process (`followChanges`).
 */
export function createTransferStore(db: Db, options: { cacheMs?: number; secrets: SecretBox }) {
  const cache = createNotifiedCache<number, Transfer>({ ttlMs: options.cacheMs ?? 0, maxEntries: 50_000 });

  async function rowByExternalId(owner: Owner, externalId: string) {
    const { rows } = await db.query<TransferRow>(
      'SELECT * FROM transfers WHERE integration_id = $1 AND mode = $2 AND external_id = $3',
      [owner.integrationId, owner.mode, externalId],
    );
    return rows[0];
  }

  async function findByExternalId(owner: Owner, externalId: string) {
    const row = await rowByExternalId(owner, externalId);
    return row ? toTransfer(row) : null;
  }

  const nextTransferId = createIdAllocator(db);

  /**
   * Inserts quotes and their `transfer.quote_created` events (with their deliveries) in one
   * statement: one round trip and one commit for every create of an event-loop turn. Ids are drawn
   * beforehand so each event can carry its whole transfer.
   */
  async function insertQuotes(items: QuoteInsert[]): Promise<Transfer[]> {
    const transfers = await Promise.all(
      items.map(async ({ owner, quote }): Promise<Transfer> => {
        const { fingerprint: _fingerprint, ...terms } = quote;
        return {
          ...terms,
          id: await nextTransferId(),
          integrationId: owner.integrationId,
          mode: owner.mode,
          supportBundleId: supportBundleIdFrom(randomBytes(8)),
          fundingStrategy: FUNDING_STRATEGY,
          status: 'quote',
          phase: 'quoted',
          hopsCompleted: 0,
          lastError: null,
          recovery: null,
          signatures: { routeInit: [], sessionInit: [], hops: [] },
          depositReceivedAt: null,
          completedAt: null,
          createdAt: quote.quotedAt,
          updatedAt: quote.quotedAt,
        };
      }),
    );
    const column = <T>(pick: (transfer: Transfer, quote: NewQuote) => T) =>
      transfers.map((transfer, index) => pick(transfer, items[index]!.quote));
    // Idempotent creates store their response in the same statement: the quote and the record of
    // having answered it commit together.
    const completions = items.flatMap(({ completion }, index) =>
      completion
        ? [
            {
              scope: completion.scope,
              key: completion.key,
              now: completion.now,
              response: completion.responseFor(transfers[index]!),
            },
          ]
        : [],
    );
    const outbox = outboxSql(30);
    await db.query(
      `WITH completed AS (${completionSql(40)}), transfer AS (
         INSERT INTO transfers (
           id, integration_id, mode, external_id, support_bundle_id, create_fingerprint, token_mint, token_symbol,
           token_decimals, amount_raw, amount_tokens, source_owner, recipient_wallet, funding_strategy, hops,
           arrival_seconds, token_price_usd, price_source, usd_equivalent, pricing_tier, percent_fee_bps,
           percent_fee_raw, integrator_percent_share_raw, net_delivered_raw, flat_fee_lamports_per_hop,
           total_flat_fee_lamports, integrator_flat_share_lamports, status, phase, quoted_at, expires_at,
           created_at, updated_at, event_sequence)
         OVERRIDING SYSTEM VALUE
         SELECT id, integration_id, mode, external_id, support_bundle_id, create_fingerprint, token_mint, token_symbol,
                token_decimals, amount_raw, amount_tokens, source_owner, recipient_wallet, funding_strategy, hops,
                arrival_seconds, token_price_usd, price_source, usd_equivalent, pricing_tier, percent_fee_bps,
                percent_fee_raw, integrator_percent_share_raw, net_delivered_raw, flat_fee_lamports_per_hop,
                total_flat_fee_lamports, integrator_flat_share_lamports, 'quote', 'quoted', quoted_at, expires_at,
                quoted_at, quoted_at, 1
           FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::bytea[], $7::text[],
                       $8::text[], $9::smallint[], $10::numeric[], $11::text[], $12::text[], $13::text[], $14::text[],
                       $15::smallint[], $16::int[], $17::text[], $18::text[], $19::float8[], $20::text[], $21::int[],
                       $22::numeric[], $23::numeric[], $24::numeric[], $25::numeric[], $26::numeric[], $27::numeric[],
                       $28::timestamptz[], $29::timestamptz[])
                AS q(id, integration_id, mode, external_id, support_bundle_id, create_fingerprint, token_mint,
                     token_symbol, token_decimals, amount_raw, amount_tokens, source_owner, recipient_wallet,
                     funding_strategy, hops, arrival_seconds, token_price_usd, price_source, usd_equivalent,
                     pricing_tier, percent_fee_bps, percent_fee_raw, integrator_percent_share_raw, net_delivered_raw,
                     flat_fee_lamports_per_hop, total_flat_fee_lamports, integrator_flat_share_lamports, quoted_at,
                     expires_at)
       ), ${outbox.ctes}
       ${outbox.select}`,
      [
        column((t) => t.id),
        column((t) => t.integrationId),
        column((t) => t.mode),
        column((t) => t.externalId),
        column((t) => t.supportBundleId),
        column((_t, q) => q.fingerprint),
        column((t) => t.tokenMint),
        column((t) => t.tokenSymbol),
        column((t) => t.tokenDecimals),
        column((t) => t.amountRaw.toString()),
        column((t) => t.amountTokens),
        column((t) => t.sourceOwner),
        column((t) => t.recipientWallet),
        column((t) => t.fundingStrategy),
        column((t) => t.hops),
        column((t) => t.arrivalSeconds),
        column((t) => t.tokenPriceUsd),
        column((t) => t.priceSource),
        column((t) => t.usdEquivalent),
        column((t) => t.pricingTier),
        column((t) => t.percentFeeBps),
        column((t) => t.percentFeeRaw.toString()),
        column((t) => t.integratorPercentShareRaw.toString()),
        column((t) => t.netDeliveredRaw.toString()),
        column((t) => t.flatFeeLamportsPerHop.toString()),
        column((t) => t.totalFlatFeeLamports.toString()),
        column((t) => t.integratorFlatShareLamports.toString()),
        column((t) => t.quotedAt),
        column((t) => t.expiresAt),
        ...outboxParams(
          transfers.map((transfer) => ({
            transfer,
            types: ['transfer.quote_created'] as const,
            firstSequence: 1,
            now: transfer.quotedAt,
          })),
        ),
        ...completionParams(options.secrets, completions),
      ],
    );
    return transfers;
  }

  // Concurrent creates share one statement; a failing batch (a unique violation) is retried one
  // create at a time, so only the offending create sees its error.
  const insertQuote = createBatcher({ maxBatch: 64, run: insertQuotes });

  /** A support reference collision is astronomically rare but must not fail a create: draw again. */
  async function insertQuoteWithRetry(item: QuoteInsert): Promise<Transfer> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await insertQuote(item);
      } catch (error) {
        if (attempt < 3 && isUniqueViolation(error, 'support_bundle_id')) continue;
        throw error;
      }
    }
  }

  /**
   * The outcome for a create whose externalId is already taken (decision C6): the existing
   * transfer when the request is the same, a conflict otherwise; null when the id is free.
   */
  async function matchExternalId(
    owner: Owner,
    externalId: string | null,
    fingerprint: Buffer,
  ): Promise<Exclude<CreateQuoteResult, { kind: 'created' }> | null> {
    if (!externalId) return null;
    const row = await rowByExternalId(owner, externalId);
    if (!row) return null;
    const same = Buffer.from(row.create_fingerprint).equals(fingerprint);
    return { kind: same ? 'existing' : 'conflict', transfer: toTransfer(row) };
  }

  return {
    /**
     * Creates a quote and its `transfer.quote_created` event in one transaction. A repeated
     * externalId returns the existing transfer when the request is the same, a conflict otherwise;
     * concurrent creates with one externalId resolve the same way through the unique index.
     */
    async createQuote(
      owner: Owner,
      quote: NewQuote,
      completion?: IdempotencyCompletion,
    ): Promise<CreateQuoteResult> {
      // A taken externalId surfaces as a unique violation: the insert itself is the check.
      try {
        return { kind: 'created', transfer: await insertQuoteWithRetry({ owner, quote, completion }) };
      } catch (error) {
        if (!isUniqueViolation(error, 'transfers_external_id_idx')) throw error;
        const after = await matchExternalId(owner, quote.externalId, quote.fingerprint);
        if (after) return after;
        throw error;
      }
    },

    matchExternalId,

    /** One transfer of this owner, or null (another owner's id is as unknown as a missing one). */
    async get(owner: Owner, id: number) {
      const transfer = await cache.read(id, async () => {
        const { rows } = await db.query<TransferRow>('SELECT * FROM transfers WHERE id = $1', [id]);
        return rows[0] ? toTransfer(rows[0]) : null;
      });
      return transfer && transfer.integrationId === owner.integrationId && transfer.mode === owner.mode
        ? transfer
        : null;
    },

    /** Starts keeping the read cache in step with changes from every process; resolves to a stop function. */
    followChanges: (log?: { warn(obj: object, msg: string): void }) =>
      cache.follow(db, TRANSFER_CHANGED_CHANNEL, (payload) => Number(payload), log),

    /** The transfer of this owner with this externalId, or null. */
    getByExternalId: findByExternalId,

    /** A page of this owner's transfers, newest first, with the exact number matching the filters. */
    async list(owner: Owner, filters: TransferFilters, page: { limit: number; offset: number }) {
      const conditions = ['integration_id = $1', 'mode = $2'];
      const params: unknown[] = [owner.integrationId, owner.mode];
      const add = (condition: string, value: unknown) => {
        params.push(value);
        conditions.push(condition.replace('?', `$${params.length}`));
      };
      if (filters.status) add('status = ?', filters.status);
      if (filters.fromDate) add('created_at >= ?', filters.fromDate);
      if (filters.toDate) add('created_at < ?', filters.toDate);
      if (filters.externalId) add('external_id = ?', filters.externalId);
      if (filters.supportBundleId) add('support_bundle_id = ?', filters.supportBundleId);
      const where = conditions.join(' AND ');
      const { rows, total } = await readPage<TransferRow>(
        db,
        { select: '*', from: 'transfers', where, orderBy: 'created_at DESC, id DESC', params },
        page,
      );
      return { items: rows.map(toTransfer), total };
    },

    /**
     * Moves quotes whose `expiresAt` has passed to `expired`, with their events, in batches that
     * several workers can share (`SKIP LOCKED`). Returns the transfers expired.
     */
    async expireDue(now: Date, batchSize: number): Promise<Transfer[]> {
      const types = ['transfer.phase_changed', 'transfer.expired'] as const;
      return db
        .transaction(async (tx) => {
          // The sequence numbers of the two events are reserved in the same update.
          const { rows } = await tx.query<TransferRow & { event_sequence: number }>(
            `UPDATE transfers SET status = 'expired', phase = 'expired', expired_at = $1, updated_at = $1,
                    event_sequence = event_sequence + $3
            WHERE id IN (SELECT id FROM transfers WHERE status = 'quote' AND expires_at <= $1
                          ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
            RETURNING *`,
            [now, batchSize, types.length],
          );
          if (rows.length === 0) return [];
          const expired = rows.map(toTransfer);
          const outbox = outboxSql(1);
          await tx.query(
            `WITH ${outbox.ctes} ${outbox.select}`,
            outboxParams(
              rows.map((row, index) => ({
                transfer: expired[index]!,
                types,
                firstSequence: row.event_sequence - types.length + 1,
                now,
              })),
            ),
          );
          return expired;
        })
        .then((expired) => {
          // This process reads its own changes at once; others are told by the database.
          for (const transfer of expired) cache.evict(transfer.id);
          return expired;
        });
    },

    /** Usage of an owner over transfers created in [from, to): counts, volume and revenue. */
    async usage(owner: Owner, window: { from: Date | undefined; to: Date | undefined }) {
      const params: unknown[] = [owner.integrationId, owner.mode, window.from ?? null, window.to ?? null];
      const scope = `integration_id = $1 AND mode = $2
        AND ($3::timestamptz IS NULL OR created_at >= $3) AND ($4::timestamptz IS NULL OR created_at < $4)`;
      const totals = await db.query<{
        total: string;
        completed: string;
        failed: string;
        expired: string;
        processing: string;
        volume_usd: number | null;
        revenue_lamports: string | null;
      }>(
        `SELECT count(*) AS total,
                count(*) FILTER (WHERE status = 'completed') AS completed,
                count(*) FILTER (WHERE status = 'failed') AS failed,
                count(*) FILTER (WHERE status = 'expired') AS expired,
                count(*) FILTER (WHERE status = 'processing') AS processing,
                sum(usd_equivalent) FILTER (WHERE status = 'completed') AS volume_usd,
                sum(integrator_flat_share_lamports) FILTER (WHERE status = 'completed') AS revenue_lamports
           FROM transfers WHERE ${scope}`,
        params,
      );
      const byMint = await db.query<{ token_mint: string; revenue_raw: string }>(
        `SELECT token_mint, sum(integrator_percent_share_raw) AS revenue_raw
           FROM transfers WHERE ${scope} AND status = 'completed'
          GROUP BY token_mint ORDER BY token_mint`,
        params,
      );
      const row = totals.rows[0]!;
      return {
        totalTransfers: Number(row.total),
        completedTransfers: Number(row.completed),
        failedTransfers: Number(row.failed),
        expiredTransfers: Number(row.expired),
        processingTransfers: Number(row.processing),
        totalVolumeUsd: row.volume_usd ?? 0,
        totalRevenueLamports: BigInt(row.revenue_lamports ?? '0'),
        revenueByMint: byMint.rows.map((mint) => ({
          tokenMint: mint.token_mint,
          amountRaw: BigInt(mint.revenue_raw),
        })),
      };
    },
  };
}

export type TransferStore = ReturnType<typeof createTransferStore>;
