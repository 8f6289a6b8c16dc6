import type { Address } from '@solana/kit';
import type { RouteSchedule } from '../domain/route.ts';
import type { PreparedRouteTerms } from '../domain/route-terms.ts';
import type { Transfer, TransferSignatures } from '../domain/transfer.ts';
import { claimAwaitingDeployment } from './claims/awaiting-deployment.ts';
import type { Db, Sql } from './db.ts';
import { openKeeperKey, sealKeeperKey } from './keeper-keys.ts';
import type { SecretBox } from './secret-box.ts';
import { type TransferRow, toTransfer } from './transfer-rows.ts';
import { applyMove, type VerifiedSignatures } from './transitions.ts';

/** What the first prepare fixes for a transfer's route. */
export interface RouteAssignment {
  routeAddress: Address;
  keeper: Address;
  /** The keeper's 32-byte private key; sealed before it is stored. */
  keeperPrivateKey: Uint8Array;
  keeperFundingLamports: bigint;
  hopPriorityMicroLamports: bigint;
  now: Date;
}

/** What a takeover records besides status and phase. */
interface Takeover {
  signatures: VerifiedSignatures;
  schedule: RouteSchedule;
  keeperDueAt: bigint;
  now: Date;
}

/**
 * The deployment side of a transfer: its route and keeper, the keeper's funding, and the takeover
 * once the route is complete on chain. Every change that moves the phase writes its events in the
 * caller's transaction.
 */
export function createDeploymentStore(db: Db, secrets: SecretBox) {
  return {
    assignRoute: (transferId: number, input: RouteAssignment) => assignRoute(db, secrets, transferId, input),
    recordRouteTerms,
    preparedRouteTerms: (transferId: number) => preparedRouteTerms(db, transferId),
    keeperPrivateKey: (transferId: number) => keeperPrivateKey(db, secrets, transferId),
    recordPrepared,
    recordKeeperFunding,
    recordDeploying,
    takeOver,
    expireDeployment,
    claimAwaitingDeployment: (now: Date, leaseMs: number, limit: number) =>
      claimAwaitingDeployment(db, now, leaseMs, limit),
    addSignatures,
  };
}

export type DeploymentStore = ReturnType<typeof createDeploymentStore>;

/** A transfer by id; `lock` holds its row until the caller's transaction ends. */
async function readTransfer(
  sql: Sql,
  transferId: number,
  options: { lock?: boolean } = {},
): Promise<Transfer> {
  const { rows } = await sql.query<TransferRow>(
    `SELECT * FROM transfers WHERE id = $1${options.lock ? ' FOR UPDATE' : ''}`,
    [transferId],
  );
  if (!rows[0]) throw new Error(`transfer ${transferId} does not exist`);
  return toTransfer(rows[0]);
}

/**
 * Gives a transfer its route address and its own keeper, unless it already has them: the keeper
 * is stored (sealed) before any bundle funding it is handed out, and concurrent first prepares
 * agree on one. Answers the transfer with the keeper that won.
 */
async function assignRoute(
  db: Db,
  secrets: SecretBox,
  transferId: number,
  input: RouteAssignment,
): Promise<Transfer> {
  const { rows } = await db.query<TransferRow>(
    `UPDATE transfers
        SET route_address = $2, keeper_address = $3, keeper_secret = $4, keeper_funding_lamports = $5,
            hop_priority_micro_lamports = $6, prepared_at = $7, next_check_at = $7, updated_at = $7
      WHERE id = $1 AND keeper_address IS NULL
      RETURNING *`,
    [
      transferId,
      input.routeAddress,
      input.keeper,
      sealKeeperKey(secrets, input.keeperPrivateKey),
      input.keeperFundingLamports.toString(),
      input.hopPriorityMicroLamports.toString(),
      input.now,
    ],
  );
  return rows[0] ? toTransfer(rows[0]) : readTransfer(db, transferId);
}

/** Records the terms a prepare put into the route's creation, before its bundle is handed out. */
async function recordRouteTerms(
  tx: Sql,
  transferId: number,
  terms: PreparedRouteTerms,
  now: Date,
): Promise<void> {
  await tx.query(
    `INSERT INTO route_terms (transfer_id, mint, amount_raw, hop_count, percent_fee_bps, integrator_share_bps,
                              flat_fee_per_hop_lamports, first_release_at, interval_seconds, deadline_at, keeper,
                              recipient, recipient_token, platform_wallet, platform_fee_token, integrator_wallet,
                              integrator_fee_token, screening_required, max_deposit_lamports, prepared_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
    [
      transferId,
      terms.mint,
      terms.amount.toString(),
      terms.hopCount,
      terms.percentFeeBps,
      terms.integratorShareBps,
      terms.flatFeePerHopLamports.toString(),
      terms.firstReleaseAt.toString(),
      terms.intervalSecs,
      terms.deadlineAt.toString(),
      terms.keeper,
      terms.recipient,
      terms.recipientToken,
      terms.platformWallet,
      terms.platformFeeToken,
      terms.integratorWallet,
      terms.integratorFeeToken,
      terms.screeningRequired,
      terms.maxDepositLamports.toString(),
      now,
    ],
  );
}

/** Every terms the transfer's prepares put into its route's creation, oldest first. */
async function preparedRouteTerms(db: Db, transferId: number): Promise<PreparedRouteTerms[]> {
  const { rows } = await db.query<RouteTermsRow>(
    'SELECT * FROM route_terms WHERE transfer_id = $1 ORDER BY id',
    [transferId],
  );
  return rows.map(toRouteTerms);
}

/** The private key of a transfer's keeper, or null before the first prepare. */
async function keeperPrivateKey(db: Db, secrets: SecretBox, transferId: number): Promise<Uint8Array | null> {
  const { rows } = await db.query<{ keeper_secret: string | null }>(
    'SELECT keeper_secret FROM transfers WHERE id = $1',
    [transferId],
  );
  const sealed = rows[0]?.keeper_secret;
  return sealed ? openKeeperKey(secrets, sealed) : null;
}

/**
 * Records that a bundle was handed out: a quote now awaits the source's signature, and whether
 * this bundle asked for the keeper's funding decides whether its signature is required (a
 * resumed bundle leaves out a keeper already funded on chain, whoever reported it).
 */
async function recordPrepared(
  tx: Sql,
  transferId: number,
  input: { keeperFundingInBundle: boolean; now: Date },
): Promise<Transfer> {
  const move = { name: 'prepared', keeperFundingInBundle: input.keeperFundingInBundle } as const;
  return (await applyMove(tx, transferId, move, input.now)) ?? readTransfer(tx, transferId);
}

/**
 * Records that the keeper is funded: by the verified signature the source reported (the first
 * one counts), or as seen on chain (null). A transfer still `quoted` moves to phase `funding`.
 */
async function recordKeeperFunding(
  tx: Sql,
  transferId: number,
  signature: string | null,
  now: Date,
): Promise<Transfer> {
  await tx.query(
    `UPDATE transfers SET keeper_funding_signature = coalesce(keeper_funding_signature, $2), updated_at = $3
      WHERE id = $1`,
    [transferId, signature, now],
  );
  return (await applyMove(tx, transferId, { name: 'keeperFunded' }, now)) ?? readTransfer(tx, transferId);
}

/** A route found partly on chain: phase `deploying` (from `quoted` or `funding`). */
async function recordDeploying(tx: Sql, transferId: number, now: Date): Promise<Transfer> {
  return (await applyMove(tx, transferId, { name: 'deploying' }, now)) ?? readTransfer(tx, transferId);
}

/**
 * Takes over a route found complete on chain: status `processing`, phase `executing`, the
 * deposit received now, the schedule as deployed and the verified signatures. Only one caller
 * takes a transfer over; the others (another process, the reconciler) get null.
 */
function takeOver(tx: Sql, transferId: number, input: Takeover): Promise<Transfer | null> {
  const { now, ...recorded } = input;
  return applyMove(tx, transferId, { name: 'takenOver', ...recorded }, now);
}

/**
 * A deployment abandoned with nothing of it on chain (its keeper's lamports already returned):
 * `expired`. Answers the transfer as it is now, also when another process settled it first.
 */
async function expireDeployment(tx: Sql, transferId: number, now: Date): Promise<Transfer> {
  return (await applyMove(tx, transferId, { name: 'expired' }, now)) ?? readTransfer(tx, transferId);
}

/** Adds verified signatures a transfer already taken over did not have yet. */
async function addSignatures(
  tx: Sql,
  transferId: number,
  input: VerifiedSignatures,
  now: Date,
): Promise<Transfer> {
  const current = await readTransfer(tx, transferId, { lock: true });
  const merge = (known: readonly string[], more: readonly string[]) => [...new Set([...known, ...more])];
  const signatures: TransferSignatures = {
    ...current.signatures,
    routeInit: merge(current.signatures.routeInit, input.routeInit),
    sessionInit: merge(current.signatures.sessionInit, input.sessionInit),
  };
  const { rows } = await tx.query<TransferRow>(
    `UPDATE transfers SET signatures = $2::jsonb, orchestrator_signature = coalesce(orchestrator_signature, $3),
            updated_at = $4
      WHERE id = $1 RETURNING *`,
    [transferId, JSON.stringify(signatures), input.orchestrator, now],
  );
  return toTransfer(rows[0]!);
}

type RouteTermsRow = {
  mint: string;
  amount_raw: string;
  hop_count: number;
  percent_fee_bps: number;
  integrator_share_bps: number;
  flat_fee_per_hop_lamports: string;
  first_release_at: string;
  interval_seconds: number;
  deadline_at: string;
  keeper: string;
  recipient: string;
  recipient_token: string | null;
  platform_wallet: string;
  platform_fee_token: string;
  integrator_wallet: string;
  integrator_fee_token: string;
  screening_required: boolean;
  max_deposit_lamports: string;
};

function toRouteTerms(row: RouteTermsRow): PreparedRouteTerms {
  return {
    mint: row.mint as Address,
    amount: BigInt(row.amount_raw),
    hopCount: row.hop_count,
    percentFeeBps: row.percent_fee_bps,
    integratorShareBps: row.integrator_share_bps,
    flatFeePerHopLamports: BigInt(row.flat_fee_per_hop_lamports),
    firstReleaseAt: BigInt(row.first_release_at),
    intervalSecs: row.interval_seconds,
    deadlineAt: BigInt(row.deadline_at),
    keeper: row.keeper as Address,
    recipient: row.recipient as Address,
    recipientToken: row.recipient_token as Address | null,
    platformWallet: row.platform_wallet as Address,
    platformFeeToken: row.platform_fee_token as Address,
    integratorWallet: row.integrator_wallet as Address,
    integratorFeeToken: row.integrator_fee_token as Address,
    screeningRequired: row.screening_required,
    maxDepositLamports: BigInt(row.max_deposit_lamports),
  };
}
