import type { Address } from '@solana/kit';
import type { Owner } from '../domain/integration.ts';
import type { IntegratorShares, RewardBalances } from '../domain/rewards.ts';
import type { Transfer } from '../domain/transfer.ts';
import { claimLapsedRewardClaims } from './claims/lapsed-reward-claims.ts';
import type { Db, Sql } from './db.ts';
import {
  claimOfRequest,
  confirmClaim,
  failClaim,
  getClaim,
  insertClaim,
  listClaims,
} from './reward-claims.ts';

/** Lamports, and raw units per mint, owed to integrators. */
export interface Owed {
  lamports: bigint;
  /** Mints with a positive amount, in mint order. */
  tokens: Map<Address, bigint>;
}

/** A window of transfers' creation times, [from, to); an open end is unbounded. */
interface CreatedWindow {
  from: Date | undefined;
  to: Date | undefined;
}

/** Integrator rewards: balances, the rewards wallet, claims and their payout's progress. */
export function createRewardStore(db: Db) {
  return {
    /** The owner's wallet and balances (zero when it never earned anything). */
    balances: (owner: Owner, sql: Sql = db) => readBalances(sql, owner, false),
    lockBalances,
    setWallet,
    insertClaim,
    claimOfRequest: (apiKeyId: number, idempotencyKey: string) =>
      claimOfRequest(db, apiKeyId, idempotencyKey),
    getClaim: (id: number) => getClaim(db, id),
    confirmClaim: (id: number, now: Date) => confirmClaim(db, id, now),
    failClaim: (id: number, error: string, now: Date) => failClaim(db, id, error, now),
    takeOverPending: (now: Date, leaseMs: number, limit: number) =>
      claimLapsedRewardClaims(db, now, leaseMs, limit),
    revenue: (owner: Owner, window: CreatedWindow) => revenue(db, owner, window),
    revenueByDay: (owner: Owner, window: { from: Date; to: Date }) => revenueByDay(db, owner, window),
    owed: () => owed(db),
    reserved,
    lockEarnings,
    listClaims: (owner: Owner, page: { limit: number; offset: number }) => listClaims(db, owner, page),
  };
}

export type RewardStore = ReturnType<typeof createRewardStore>;

/** The owner's account row, created empty when missing (the parent of its balances and claims). */
const ENSURE_ACCOUNT_SQL = `
  INSERT INTO reward_accounts (integration_id, mode, updated_at) VALUES ($1, $2, $3)
  ON CONFLICT (integration_id, mode) DO NOTHING`;

/**
 * Credits a settled transfer's integrator shares (of what its route paid) to its owner's rewards,
 * in the caller's transaction (the one recording the settlement): the flat fee share to the
 * lamport balance, the percentage fee share to its mint's. A transfer is credited once.
 */
export async function accrueRewards(
  tx: Sql,
  transfer: Transfer,
  shares: IntegratorShares,
  now: Date,
): Promise<void> {
  const owner = [transfer.integrationId, transfer.mode];
  const lamports = shares.flatShareLamports.toString();
  const amountRaw = shares.percentShareRaw.toString();
  await tx.query(ENSURE_ACCOUNT_SQL, [...owner, now]);
  const { rowCount } = await tx.query(
    `INSERT INTO reward_accruals (transfer_id, integration_id, mode, mint, amount_raw, lamports, accrued_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (transfer_id) DO NOTHING`,
    [transfer.id, ...owner, transfer.tokenMint, amountRaw, lamports, now],
  );
  if (rowCount === 0) return;
  await tx.query(
    `UPDATE reward_accounts SET accrued_lamports = accrued_lamports + $3, updated_at = $4
      WHERE integration_id = $1 AND mode = $2`,
    [...owner, lamports, now],
  );
  if (shares.percentShareRaw === 0n) return;
  await tx.query(
    `INSERT INTO reward_token_balances (integration_id, mode, mint, accrued_raw) VALUES ($1, $2, $3, $4)
     ON CONFLICT (integration_id, mode, mint)
     DO UPDATE SET accrued_raw = reward_token_balances.accrued_raw + excluded.accrued_raw`,
    [...owner, transfer.tokenMint, amountRaw],
  );
}

/** The owner's wallet and balances; `lock` holds its account row until the caller's transaction ends. */
async function readBalances(sql: Sql, owner: Owner, lock: boolean): Promise<RewardBalances> {
  const params = [owner.integrationId, owner.mode];
  const account = await sql.query<AccountRow>(
    `SELECT wallet, accrued_lamports, claimed_lamports FROM reward_accounts
      WHERE integration_id = $1 AND mode = $2${lock ? ' FOR UPDATE' : ''}`,
    params,
  );
  const tokens = await sql.query<TokenRow>(
    `SELECT mint, accrued_raw, claimed_raw FROM reward_token_balances
      WHERE integration_id = $1 AND mode = $2 ORDER BY mint`,
    params,
  );
  return toBalances(account.rows[0], tokens.rows);
}

/**
 * Locks the owner's rewards until the transaction ends and reads them: a claim holding this
 * lock sees what no other claim has taken, and takes it before letting go.
 */
async function lockBalances(tx: Sql, owner: Owner, now: Date): Promise<RewardBalances> {
  await tx.query(ENSURE_ACCOUNT_SQL, [owner.integrationId, owner.mode, now]);
  return readBalances(tx, owner, true);
}

/** Sets the owner's rewards wallet, in the caller's transaction. */
async function setWallet(tx: Sql, owner: Owner, wallet: Address, now: Date): Promise<void> {
  await tx.query(
    `INSERT INTO reward_accounts (integration_id, mode, wallet, updated_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (integration_id, mode) DO UPDATE SET wallet = excluded.wallet, updated_at = excluded.updated_at`,
    [owner.integrationId, owner.mode, wallet, now],
  );
}

/**
 * What the ledger credited the owner for transfers created in [from, to): lamports, and raw
 * units per mint (ordered by mint).
 */
async function revenue(db: Db, owner: Owner, window: CreatedWindow) {
  const { rows } = await db.query<RevenueRow>(REVENUE_SQL, [
    owner.integrationId,
    owner.mode,
    window.from ?? null,
    window.to ?? null,
    null,
  ]);
  return revenueOf(rows);
}

/**
 * The same revenue, day by day (UTC days from `from`, which must be a midnight): one entry per day
 * of [from, to) whose transfers earned anything, oldest first.
 */
async function revenueByDay(db: Db, owner: Owner, window: { from: Date; to: Date }) {
  const { rows } = await db.query<RevenueRow>(REVENUE_SQL, [
    owner.integrationId,
    owner.mode,
    window.from,
    window.to,
    '1 day',
  ]);
  const days = new Map<number, RevenueRow[]>();
  for (const row of rows) {
    const day = row.bucket!.getTime();
    days.set(day, [...(days.get(day) ?? []), row]);
  }
  return [...days.entries()]
    .sort(([a], [b]) => a - b)
    .map(([day, dayRows]) => ({ day: new Date(day), ...revenueOf(dayRows) }));
}

/**
 * The integrator shares credited for the owner's transfers created in [from, to), per mint: the
 * flat fee shares in lamports and the percentage fee shares in raw units. `$5` groups them by
 * another key too (NULL: none).
 */
const REVENUE_SQL = `
  SELECT accrual.mint, sum(accrual.amount_raw) AS amount_raw, sum(accrual.lamports) AS lamports,
         date_bin($5::interval, transfer.created_at, $3) AS bucket
    FROM reward_accruals accrual JOIN transfers transfer ON transfer.id = accrual.transfer_id
   WHERE accrual.integration_id = $1 AND accrual.mode = $2
     AND ($3::timestamptz IS NULL OR transfer.created_at >= $3)
     AND ($4::timestamptz IS NULL OR transfer.created_at < $4)
   GROUP BY accrual.mint, bucket ORDER BY accrual.mint`;

type RevenueRow = { mint: Address; amount_raw: string; lamports: string; bucket: Date | null };

/** Revenue from rows of {@link REVENUE_SQL}: lamports in all, raw units per mint in mint order. */
function revenueOf(rows: readonly RevenueRow[]) {
  return {
    lamports: rows.reduce((sum, row) => sum + BigInt(row.lamports), 0n),
    byMint: rows.map((row) => ({ mint: row.mint, amountRaw: BigInt(row.amount_raw) })),
  };
}

/** Every amount owed as (asset, amount): `lamports`, or a mint. Claimable, then pending claims. */
const OWED_PARTS = `
  SELECT 'lamports' AS asset, accrued_lamports - claimed_lamports AS amount FROM reward_accounts
  UNION ALL SELECT 'lamports', lamports FROM reward_claims WHERE status = 'pending'
  UNION ALL SELECT mint, accrued_raw - claimed_raw FROM reward_token_balances
  UNION ALL SELECT token ->> 'mint', (token ->> 'amountRaw')::numeric
    FROM reward_claims, jsonb_array_elements(tokens) AS token WHERE status = 'pending'`;
const OWED_SQL = `SELECT asset, sum(amount) AS amount FROM (${OWED_PARTS}) AS owing GROUP BY asset ORDER BY asset`;
/** The same, and the integrator shares of transfers whose route may still settle. */
const RESERVED_SQL = `SELECT asset, sum(amount) AS amount FROM (${OWED_PARTS}
  UNION ALL SELECT 'lamports', integrator_flat_share_lamports FROM transfers WHERE status = 'processing'
  UNION ALL SELECT token_mint, integrator_percent_share_raw FROM transfers WHERE status = 'processing'
) AS owing GROUP BY asset ORDER BY asset`;

/**
 * What every integration is owed, both modes together (they are paid from the same platform
 * accounts): what is claimable plus what pending claims are still to pay; lamports, and raw
 * units per mint.
 */
function owed(db: Db): Promise<Owed> {
  return owedIn(db, OWED_SQL);
}

/**
 * What a withdrawal of the platform's own earnings must leave in place, read under the
 * earnings lock ({@link lockEarnings}) in `tx`: what integrators are owed, plus their shares of
 * transfers whose route may still settle (status `processing`), whose fees reach the platform's
 * accounts on chain a moment before the ledger credits them. One statement, so one snapshot:
 * a transfer credited meanwhile counts once.
 */
function reserved(tx: Sql): Promise<Owed> {
  return owedIn(tx, RESERVED_SQL);
}

async function owedIn(sql: Sql, text: string): Promise<Owed> {
  const { rows } = await sql.query<{ asset: string; amount: string }>(text);
  const owed: Owed = { lamports: 0n, tokens: new Map() };
  for (const row of rows) {
    const amount = BigInt(row.amount);
    if (row.asset === 'lamports') owed.lamports = amount;
    else if (amount > 0n) owed.tokens.set(row.asset as Address, amount);
  }
  return owed;
}

/** Arbitrary constant: the advisory lock held while the platform's earnings are withdrawn. */
const EARNINGS_LOCK_KEY = 4_271_003_011;

/**
 * Takes the earnings lock until `tx` ends: withdrawals of the platform's earnings run one at a
 * time, each reading the chain after the previous one settled.
 */
async function lockEarnings(tx: Sql): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1)', [EARNINGS_LOCK_KEY]);
}

type AccountRow = { wallet: Address | null; accrued_lamports: string; claimed_lamports: string };
type TokenRow = { mint: Address; accrued_raw: string; claimed_raw: string };

function toBalances(account: AccountRow | undefined, tokens: TokenRow[]): RewardBalances {
  const accrued = BigInt(account?.accrued_lamports ?? '0');
  const claimed = BigInt(account?.claimed_lamports ?? '0');
  return {
    wallet: account?.wallet ?? null,
    lamports: { accrued, claimed, claimable: accrued - claimed },
    tokens: tokens.map((token) => ({
      mint: token.mint,
      accruedRaw: BigInt(token.accrued_raw),
      claimedRaw: BigInt(token.claimed_raw),
      claimableRaw: BigInt(token.accrued_raw) - BigInt(token.claimed_raw),
    })),
  };
}
