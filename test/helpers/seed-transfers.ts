import { createHash, randomBytes } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import type { Sql } from '../../src/store/db.ts';

/** How to seed: whose transfers, how many, and over which period. */
export interface SeedOptions {
  integrationId: number;
  mode: 'test' | 'live';
  count: number;
  /** Creation times fall in [start, start + days). */
  start: Date;
  days: number;
  /** How many transfers share each creation instant (1: ties only by chance). */
  perInstant?: number;
}

const base58 = getBase58Decoder();
/** Base58 texts of `length` bytes, the same on every run. */
const keys = (kind: string, count: number, length: number) =>
  Array.from({ length: count }, (_, index) => {
    const bytes = Buffer.alloc(length);
    for (let offset = 0; offset < length; offset += 32) {
      createHash('sha256').update(`${kind}-${index}-${offset}`).digest().copy(bytes, offset);
    }
    return base58.decode(bytes);
  });
const RECIPIENTS = keys('recipient', 2_000, 32);
const SOURCES = keys('source', 500, 32);
const SIGNATURES = keys('signature', 256, 64);
/** SOL, USDC, USDT and BONK with their decimals. */
const MINTS = [
  ['So11111111111111111111111111111111111111112', 'SOL', 9],
  ['EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', 'USDC', 6],
  ['Es9vMFrzaCERmJfrF4H2FYD4KCoNkY9NV6WiMNpTjBs2', 'USDT', 6],
  ['DezXAZ8z7PHx7bkcaLRMtvjC4qUo5s4NfC4x5ZUtDmEV', 'BONK', 5],
] as const;

/**
 * Inserts `count` transfers straight into the store in one statement, shaped like a live
 * integration's: mostly completed, some expired, failed, refunded or under way; four tokens;
 * amounts over six orders of magnitude; thousands of wallets; the signatures, errors and recovery
 * figures their status implies; creation times spread over the period (`perInstant` of them at
 * each instant). Route columns, which no view shows, are left empty. The same transfers on every
 * run but for their `supportBundleId` (`TR-<prefix>-<n>`) and `externalId` (`order-<prefix>-<n>`,
 * on 70% of them), whose prefix is drawn anew so that seeds never collide.
 */
export async function seedTransfers(sql: Pick<Sql, 'query'>, options: SeedOptions): Promise<void> {
  const prefix = randomBytes(3).toString('hex').toUpperCase();
  // u(k, salt): a uniform number in [0, 1) drawn from k, the same on every run.
  const u = (k: string, salt: string) =>
    `(('x' || substr(md5('${salt}:' || ${k}), 1, 8))::bit(32)::bigint / 4294967296.0)`;
  await sql.query(
    `INSERT INTO transfers (
       integration_id, mode, external_id, support_bundle_id, create_fingerprint, token_mint, token_symbol,
       token_decimals, amount_raw, amount_tokens, source_owner, recipient_wallet, funding_strategy, hops,
       arrival_seconds, token_price_usd, price_source, usd_equivalent, pricing_tier, percent_fee_bps,
       percent_fee_raw, integrator_percent_share_raw, net_delivered_raw, flat_fee_lamports_per_hop,
       total_flat_fee_lamports, integrator_flat_share_lamports, status, phase, hops_completed, last_error,
       recovery, signatures, quoted_at, expires_at, deposit_received_at, completed_at, created_at, updated_at)
     SELECT $1, $2, CASE WHEN ${u('n', 'external')} < 0.7 THEN 'order-' || $9 || '-' || n END,
            'TR-' || $9 || '-' || n, '\\x00', mint.address, mint.symbol, mint.decimals, amount,
            trim_scale(amount / 10::numeric ^ mint.decimals)::text, ($6::text[])[1 + n % 500],
            ($7::text[])[1 + (n * 7919) % 2000], 'signed_bundle', hops, greatest(60, 15 * hops) + 60 * (n % 10),
            '1', 'fixed', usd, tier.name, tier.bps, ceil(amount * tier.bps / 10000),
            floor(ceil(amount * tier.bps / 10000) * 0.3), amount - ceil(amount * tier.bps / 10000),
            10000, 10000 * hops, 3000 * hops, state.status, state.phase,
            CASE WHEN state.status = 'completed' THEN hops ELSE (n % hops) * (state.status = 'processing')::int END,
            CASE WHEN state.status = 'failed' THEN jsonb_build_object('code', 'MH_031', 'message',
                   'hop 2 failed on chain: insufficient funds', 'at', created_at + interval '5 minutes') END,
            CASE WHEN state.status IN ('completed', 'failed', 'refunded') THEN jsonb_build_object(
                   'canRescue', state.status = 'failed', 'rescuableLamports', ((state.status = 'failed')::int * 4120560)::text,
                   'rescuableAccounts', '[]'::jsonb, 'canReclaimRent', state.status = 'completed',
                   'reclaimableLamports', ((state.status = 'completed')::int * (2039280 + 1113600 * hops))::text) END,
            CASE WHEN state.status IN ('quote', 'expired') THEN '{"routeInit": [], "sessionInit": [], "hops": []}'::jsonb
                 ELSE jsonb_build_object(
                   'routeInit', jsonb_build_array(($8::text[])[1 + n % 256]),
                   'sessionInit', jsonb_build_array(($8::text[])[1 + (n + 1) % 256]),
                   'hops', (SELECT coalesce(jsonb_agg(($8::text[])[1 + (n + 2 + hop) % 256]), '[]'::jsonb)
                              FROM generate_series(1, CASE WHEN state.status = 'completed' THEN hops ELSE 0 END) hop))
            END,
            created_at, created_at + interval '15 minutes',
            CASE WHEN state.status NOT IN ('quote', 'expired', 'awaiting_signature') THEN created_at + interval '1 minute' END,
            CASE WHEN state.status = 'completed' THEN created_at + greatest(60, 15 * hops) * interval '1 second' END,
            created_at, created_at + interval '20 minutes'
       FROM generate_series(1, $3::int) n,
            LATERAL (SELECT 3 + (n % 8) AS hops,
                            $4::timestamptz + date_trunc('milliseconds',
                              ${u('(n - 1) / $10::int', 'instant')} * $5::int * interval '1 day') AS created_at,
                            ${u('n', 'status')} AS draw,
                            (10 ^ (4 + 6 * ${u('n', 'amount')}))::numeric(20, 0) AS amount,
                            1 + n % 4 AS mint_index) drawn,
            LATERAL (SELECT (ARRAY[${MINTS.map(([address]) => `'${address}'`).join(', ')}])[mint_index] AS address,
                            (ARRAY[${MINTS.map(([, symbol]) => `'${symbol}'`).join(', ')}])[mint_index] AS symbol,
                            (ARRAY[${MINTS.map(([, , decimals]) => decimals).join(', ')}])[mint_index] AS decimals) mint,
            LATERAL (SELECT 5 + 500 * ${u('n', 'usd')} AS usd) price,
            LATERAL (SELECT CASE WHEN usd < 100 THEN 'micro' ELSE 'standard' END AS name,
                            CASE WHEN usd < 100 THEN 150 ELSE 100 END AS bps) tier,
            LATERAL (SELECT CASE WHEN draw < 0.80 THEN 'completed'
                                 WHEN draw < 0.89 THEN 'expired'
                                 WHEN draw < 0.92 THEN 'failed'
                                 WHEN draw < 0.93 THEN 'refunded'
                                 WHEN draw < 0.96 THEN 'processing'
                                 WHEN draw < 0.98 THEN 'awaiting_signature'
                                 ELSE 'quote' END AS status) status_draw,
            LATERAL (SELECT status_draw.status,
                            CASE status_draw.status WHEN 'completed' THEN 'settled' WHEN 'expired' THEN 'expired'
                                 WHEN 'failed' THEN 'failed' WHEN 'refunded' THEN 'rescued'
                                 WHEN 'processing' THEN 'executing' WHEN 'awaiting_signature' THEN 'deploying'
                                 ELSE 'quoted' END AS phase) state`,
    [
      options.integrationId,
      options.mode,
      options.count,
      options.start,
      options.days,
      SOURCES,
      RECIPIENTS,
      SIGNATURES,
      prefix,
      options.perInstant ?? 1,
    ],
  );
}
