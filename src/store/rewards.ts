import type { Address } from '@solana/kit';
import type { Owner } from '../domain/integration.ts';
import type {
  ClaimPlan,
  ClaimStatus,
  IntegratorShares,
  RewardBalances,
  RewardClaim,
} from '../domain/rewards.ts';
import type { Transfer } from '../domain/transfer.ts';
import type { Db, Sql } from './db.ts';
import { readPage } from './paging.ts';

type AccountRow = { wallet: Address | null; accrued_lamports: string; claimed_lamports: string };
type TokenRow = { mint: Address; accrued_raw: string; claimed_raw: string };
type ClaimRow = {
  id: string;
  integration_id: string;
  mode: 'test' | 'live';
  status: ClaimStatus;
  wallet: Address;
  lamports: string;
  rent_lamports: string;
  tokens: { mint: Address; amountRaw: string }[];
  transaction: string;
  signature: string;
  valid_until: string;
  last_error: string | null;
  created_at: Date;
  confirmed_at: Date | null;
};

function toClaim(row: ClaimRow): RewardClaim {
  return {
    id: Number(row.id),
    integrationId: Number(row.integration_id),
    mode: row.mode,
    status: row.status,
    wallet: row.wallet,
    lamports: BigInt(row.lamports),
    rentLamports: BigInt(row.rent_lamports),
    tokens: row.tokens.map((token) => ({ mint: token.mint, amountRaw: BigInt(token.amountRaw) })),
    transaction: row.transaction,
    signature: row.signature,
    validUntil: BigInt(row.valid_until),
    lastError: row.last_error,
    createdAt: row.created_at,
    confirmedAt: row.confirmed_at,
  };
}

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

/** Lamports, and raw units per mint, owed to integrators. */
export interface Owed {
  lamports: bigint;
  /** Mints with a positive amount, in mint order. */
  tokens: Map<Address, bigint>;
}

/** Arbitrary constant: the advisory lock held while the platform's earnings are withdrawn. */
const EARNINGS_LOCK_KEY = 4_271_003_011;

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

/** Integrator rewards: balances, the rewards wallet, claims and their payout's progress. */
export function createRewardStore(db: Db) {
  async function balancesIn(sql: Sql, owner: Owner, lock: boolean): Promise<RewardBalances> {
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

  /** Gives a failed claim's amounts back to the balances it was taken from. */
  async function giveBack(tx: Sql, claim: RewardClaim) {
    const owner = [claim.integrationId, claim.mode];
    await tx.query(
      `UPDATE reward_accounts SET claimed_lamports = claimed_lamports - $3
        WHERE integration_id = $1 AND mode = $2`,
      [...owner, claim.lamports.toString()],
    );
    for (const token of claim.tokens) {
      await tx.query(
        `UPDATE reward_token_balances SET claimed_raw = claimed_raw - $4
          WHERE integration_id = $1 AND mode = $2 AND mint = $3`,
        [...owner, token.mint, token.amountRaw.toString()],
      );
    }
  }

  return {
    /** The owner's wallet and balances (zero when it never earned anything). */
    balances: (owner: Owner, sql: Sql = db) => balancesIn(sql, owner, false),

    /**
     * Locks the owner's rewards until the transaction ends and reads them: a claim holding this
     * lock sees what no other claim has taken, and takes it before letting go.
     */
    async lockBalances(tx: Sql, owner: Owner, now: Date): Promise<RewardBalances> {
      await tx.query(ENSURE_ACCOUNT_SQL, [owner.integrationId, owner.mode, now]);
      return balancesIn(tx, owner, true);
    },

    /** Sets the owner's rewards wallet, in the caller's transaction. */
    async setWallet(tx: Sql, owner: Owner, wallet: Address, now: Date): Promise<void> {
      await tx.query(
        `INSERT INTO reward_accounts (integration_id, mode, wallet, updated_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (integration_id, mode) DO UPDATE SET wallet = excluded.wallet, updated_at = excluded.updated_at`,
        [owner.integrationId, owner.mode, wallet, now],
      );
    },

    /**
     * Stores a claim with its signed transaction and takes its amounts from the balances, in the
     * caller's transaction (which holds {@link lockBalances}'s lock).
     */
    async insertClaim(
      tx: Sql,
      owner: Owner,
      input: {
        wallet: Address;
        plan: ClaimPlan;
        transaction: string;
        signature: string;
        validUntil: bigint;
        leaseUntil: Date;
        request: { apiKeyId: number; idempotencyKey: string } | null;
        now: Date;
      },
    ): Promise<RewardClaim> {
      const { plan } = input;
      const tokens = plan.tokens.map((token) => ({
        mint: token.mint,
        amountRaw: token.amountRaw.toString(),
      }));
      const { rows } = await tx.query<ClaimRow>(
        `INSERT INTO reward_claims (integration_id, mode, status, wallet, lamports, rent_lamports, tokens,
                                    transaction, signature, valid_until, lease_until, api_key_id,
                                    idempotency_key, created_at, updated_at)
         VALUES ($1, $2, 'pending', $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11, $12, $13, $13)
         RETURNING *`,
        [
          owner.integrationId,
          owner.mode,
          input.wallet,
          plan.lamports.toString(),
          plan.rentLamports.toString(),
          JSON.stringify(tokens),
          input.transaction,
          input.signature,
          input.validUntil.toString(),
          input.leaseUntil,
          input.request?.apiKeyId ?? null,
          input.request?.idempotencyKey ?? null,
          input.now,
        ],
      );
      const claim = toClaim(rows[0]!);
      await tx.query(
        `UPDATE reward_accounts SET claimed_lamports = claimed_lamports + $3, updated_at = $4
          WHERE integration_id = $1 AND mode = $2`,
        [owner.integrationId, owner.mode, plan.lamports.toString(), input.now],
      );
      for (const token of tokens) {
        await tx.query(
          `UPDATE reward_token_balances SET claimed_raw = claimed_raw + $4
            WHERE integration_id = $1 AND mode = $2 AND mint = $3`,
          [owner.integrationId, owner.mode, token.mint, token.amountRaw],
        );
      }
      return claim;
    },

    /** The claim a request (API key and Idempotency-Key) created, or null. */
    async claimOfRequest(apiKeyId: number, idempotencyKey: string): Promise<RewardClaim | null> {
      const { rows } = await db.query<ClaimRow>(
        'SELECT * FROM reward_claims WHERE api_key_id = $1 AND idempotency_key = $2',
        [apiKeyId, idempotencyKey],
      );
      return rows[0] ? toClaim(rows[0]) : null;
    },

    /** One claim by id. */
    async getClaim(id: number): Promise<RewardClaim | null> {
      const { rows } = await db.query<ClaimRow>('SELECT * FROM reward_claims WHERE id = $1', [id]);
      return rows[0] ? toClaim(rows[0]) : null;
    },

    /** Records a pending claim's payout as landed; null when it is no longer pending. */
    async confirmClaim(id: number, now: Date): Promise<RewardClaim | null> {
      const { rows } = await db.query<ClaimRow>(
        `UPDATE reward_claims SET status = 'confirmed', confirmed_at = $2, updated_at = $2
          WHERE id = $1 AND status = 'pending' RETURNING *`,
        [id, now],
      );
      return rows[0] ? toClaim(rows[0]) : null;
    },

    /**
     * Records that a pending claim's payout can never land, and gives its amounts back to
     * claimable, in one transaction; null when it is no longer pending.
     */
    failClaim(id: number, error: string, now: Date): Promise<RewardClaim | null> {
      return db.transaction(async (tx) => {
        const { rows } = await tx.query<ClaimRow>(
          `UPDATE reward_claims SET status = 'failed', last_error = $2, updated_at = $3
            WHERE id = $1 AND status = 'pending' RETURNING *`,
          [id, error, now],
        );
        if (!rows[0]) return null;
        const claim = toClaim(rows[0]);
        await giveBack(tx, claim);
        return claim;
      });
    },

    /**
     * Takes over up to `limit` pending claims whose sender's lease lapsed (its process died or
     * gave up waiting), leasing them for `leaseMs`; several workers share them.
     */
    async takeOverPending(now: Date, leaseMs: number, limit: number): Promise<RewardClaim[]> {
      const { rows } = await db.query<ClaimRow>(
        `UPDATE reward_claims SET lease_until = $1::timestamptz + $2 * interval '1 millisecond'
          WHERE id IN (SELECT id FROM reward_claims WHERE status = 'pending' AND lease_until <= $1
                        ORDER BY lease_until LIMIT $3 FOR UPDATE SKIP LOCKED)
          RETURNING *`,
        [now, leaseMs, limit],
      );
      return rows.map(toClaim);
    },

    /**
     * What the ledger credited the owner for transfers created in [from, to): lamports, and raw
     * units per mint (ordered by mint).
     */
    async revenue(owner: Owner, window: { from: Date | undefined; to: Date | undefined }) {
      const { rows } = await db.query<{ mint: Address; amount_raw: string; lamports: string }>(
        `SELECT accrual.mint, sum(accrual.amount_raw) AS amount_raw, sum(accrual.lamports) AS lamports
           FROM reward_accruals accrual JOIN transfers transfer ON transfer.id = accrual.transfer_id
          WHERE accrual.integration_id = $1 AND accrual.mode = $2
            AND ($3::timestamptz IS NULL OR transfer.created_at >= $3)
            AND ($4::timestamptz IS NULL OR transfer.created_at < $4)
          GROUP BY accrual.mint ORDER BY accrual.mint`,
        [owner.integrationId, owner.mode, window.from ?? null, window.to ?? null],
      );
      return {
        lamports: rows.reduce((sum, row) => sum + BigInt(row.lamports), 0n),
        byMint: rows.map((row) => ({ mint: row.mint, amountRaw: BigInt(row.amount_raw) })),
      };
    },

    /**
     * What every integration is owed, both modes together (they are paid from the same platform
     * accounts): what is claimable plus what pending claims are still to pay; lamports, and raw
     * units per mint.
     */
    owed: (): Promise<Owed> => owedIn(db, OWED_SQL),

    /**
     * What a withdrawal of the platform's own earnings must leave in place, read under the
     * earnings lock ({@link lockEarnings}) in `tx`: what integrators are owed, plus their shares of
     * transfers whose route may still settle (status `processing`), whose fees reach the platform's
     * accounts on chain a moment before the ledger credits them. One statement, so one snapshot:
     * a transfer credited meanwhile counts once.
     */
    reserved: (tx: Sql): Promise<Owed> => owedIn(tx, RESERVED_SQL),

    /**
     * Takes the earnings lock until `tx` ends: withdrawals of the platform's earnings run one at a
     * time, each reading the chain after the previous one settled.
     */
    async lockEarnings(tx: Sql): Promise<void> {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [EARNINGS_LOCK_KEY]);
    },

    /** A page of the owner's claims, newest first, with their exact number. */
    async listClaims(owner: Owner, page: { limit: number; offset: number }) {
      const { rows, total } = await readPage<ClaimRow>(
        db,
        {
          select: '*',
          from: 'reward_claims',
          where: 'integration_id = $1 AND mode = $2',
          orderBy: 'created_at DESC, id DESC',
          params: [owner.integrationId, owner.mode],
        },
        page,
      );
      return { items: rows.map(toClaim), total };
    },
  };
}

export type RewardStore = ReturnType<typeof createRewardStore>;
