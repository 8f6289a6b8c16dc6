import type { Address } from '@solana/kit';
import type { Owner } from '../domain/integration.ts';
import type { ClaimPlan, ClaimStatus, RewardClaim } from '../domain/rewards.ts';
import type { Db, Sql } from './db.ts';
import { readPage } from './paging.ts';

/*
 * Reward claims: an integrator's claim of its rewards, stored with its signed payout transaction,
 * and its amounts taken from (or, when it fails, given back to) the owner's balances.
 */

/** What a claim stores besides its owner: the payout planned and its signed transaction. */
export interface NewRewardClaim {
  wallet: Address;
  plan: ClaimPlan;
  transaction: string;
  signature: string;
  validUntil: bigint;
  leaseUntil: Date;
  request: { apiKeyId: number; idempotencyKey: string } | null;
  now: Date;
}

/**
 * Stores a claim with its signed transaction and takes its amounts from the balances, in the
 * caller's transaction (which holds the reward store's `lockBalances` lock).
 */
export async function insertClaim(tx: Sql, owner: Owner, input: NewRewardClaim): Promise<RewardClaim> {
  const { plan } = input;
  const tokens = plan.tokens.map((token) => ({
    mint: token.mint,
    amountRaw: token.amountRaw.toString(),
  }));
  const { rows } = await tx.query<RewardClaimRow>(
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
  const claim = toRewardClaim(rows[0]!);
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
}

/** The claim a request (API key and Idempotency-Key) created, or null. */
export async function claimOfRequest(
  db: Db,
  apiKeyId: number,
  idempotencyKey: string,
): Promise<RewardClaim | null> {
  const { rows } = await db.query<RewardClaimRow>(
    'SELECT * FROM reward_claims WHERE api_key_id = $1 AND idempotency_key = $2',
    [apiKeyId, idempotencyKey],
  );
  return rows[0] ? toRewardClaim(rows[0]) : null;
}

/** One claim by id. */
export async function getClaim(db: Db, id: number): Promise<RewardClaim | null> {
  const { rows } = await db.query<RewardClaimRow>('SELECT * FROM reward_claims WHERE id = $1', [id]);
  return rows[0] ? toRewardClaim(rows[0]) : null;
}

/** Records a pending claim's payout as landed; null when it is no longer pending. */
export async function confirmClaim(db: Db, id: number, now: Date): Promise<RewardClaim | null> {
  const { rows } = await db.query<RewardClaimRow>(
    `UPDATE reward_claims SET status = 'confirmed', confirmed_at = $2, updated_at = $2
      WHERE id = $1 AND status = 'pending' RETURNING *`,
    [id, now],
  );
  return rows[0] ? toRewardClaim(rows[0]) : null;
}

/**
 * Records that a pending claim's payout can never land, and gives its amounts back to
 * claimable, in one transaction; null when it is no longer pending.
 */
export function failClaim(db: Db, id: number, error: string, now: Date): Promise<RewardClaim | null> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<RewardClaimRow>(
      `UPDATE reward_claims SET status = 'failed', last_error = $2, updated_at = $3
        WHERE id = $1 AND status = 'pending' RETURNING *`,
      [id, error, now],
    );
    if (!rows[0]) return null;
    const claim = toRewardClaim(rows[0]);
    await giveBack(tx, claim);
    return claim;
  });
}

/** Gives a failed claim's amounts back to the balances it was taken from. */
async function giveBack(tx: Sql, claim: RewardClaim): Promise<void> {
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

/** A page of the owner's claims, newest first, with their exact number. */
export async function listClaims(
  db: Db,
  owner: Owner,
  page: { limit: number; offset: number },
): Promise<{ items: RewardClaim[]; total: number }> {
  const { rows, total } = await readPage<RewardClaimRow>(
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
  return { items: rows.map(toRewardClaim), total };
}

/** A row of `reward_claims`, as the drivers return it. */
export type RewardClaimRow = {
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

/** The domain's RewardClaim of a row. */
export function toRewardClaim(row: RewardClaimRow): RewardClaim {
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
