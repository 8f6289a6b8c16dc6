import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isAppError } from '../../domain/errors.ts';
import { minimumClaimLamports, type RewardBalances, type RewardClaim } from '../../domain/rewards.ts';
import type { Cluster } from '../../platform/platform.ts';
import type { RewardStore } from '../../store/rewards.ts';
import type { TransferStore, TransferToken } from '../../store/transfers.ts';
import { CLAIM_WAIT_MS, type ClaimDeps, claimRewards } from '../../use-cases/claim-rewards.ts';
import { formField, formRequestKey, pageNumber } from './form.ts';
import { pageData } from './layout.ts';
import { assetName, explorerUrl, outcomeTone, sol, tokenAmount, utc } from './present.ts';

/** Claims a page lists. */
const CLAIMS_PER_PAGE = 10;
/** The form's request key, as {@link formRequestKey} makes it. */
const REQUEST_KEY = /^console-[A-Za-z0-9_-]{16}$/;

/** What the earnings page needs: the API's reward store and claim use case, and where payouts are seen. */
export interface EarningsDeps {
  rewards: Pick<RewardStore, 'balances' | 'listClaims'>;
  transfers: Pick<TransferStore, 'tokens'>;
  claims: ClaimDeps;
  /** REWARDS_MIN_CLAIM_LAMPORTS: the minimum of integrations that do not override it. */
  minClaimLamports: bigint;
  cluster: Cluster;
}

/** A mint's amount in whole tokens, named, when the owner's transfers recorded its decimals. */
function amountOf(mint: string, raw: bigint, tokens: ReadonlyMap<string, TransferToken>) {
  const token = tokens.get(mint);
  const name = assetName(mint, token?.symbol ?? null);
  return { name, amount: token ? tokenAmount(raw, token.decimals, name) : `${raw} base units of ${name}` };
}

/** A claim as the page lists it. */
function claimLine(claim: RewardClaim, tokens: ReadonlyMap<string, TransferToken>, cluster: Cluster) {
  return {
    id: claim.id,
    status: claim.status,
    tone: outcomeTone(claim.status),
    created: utc(claim.createdAt),
    confirmed: claim.confirmedAt ? utc(claim.confirmedAt) : null,
    wallet: claim.wallet,
    taken: sol(claim.lamports),
    received: sol(claim.lamports - claim.rentLamports),
    rent: claim.rentLamports > 0n ? sol(claim.rentLamports) : null,
    paid: [
      { amount: sol(claim.lamports - claim.rentLamports), what: 'flat fee shares' },
      ...claim.tokens.map((token) => ({
        amount: amountOf(token.mint, token.amountRaw, tokens).amount,
        what: 'percentage fee shares',
      })),
    ],
    signature: claim.signature,
    explorer: explorerUrl(cluster, claim.signature),
    error: claim.status === 'failed' ? claim.lastError : null,
  };
}

/** The earnings page, with what an action adds to it: an error, or the claim just made. */
async function showEarnings(
  deps: EarningsDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  extras: { status?: number; error?: string; claimId?: number } = {},
) {
  const caller = request.consoleCaller;
  const owner = caller.auth.owner;
  const page = pageNumber(request.query);
  const [balances, claims] = await Promise.all([
    deps.rewards.balances(owner),
    deps.rewards.listClaims(owner, { limit: CLAIMS_PER_PAGE, offset: (page - 1) * CLAIMS_PER_PAGE }),
  ]);
  const mints = new Set([
    ...balances.tokens.map((token) => token.mint),
    ...claims.items.flatMap((claim) => claim.tokens.map((token) => token.mint)),
  ]);
  const tokens = await deps.transfers.tokens(owner, [...mints]);
  const minimum = minimumClaimLamports(caller.auth.settings, deps.minClaimLamports);
  const claimable = balances.lamports.claimable;
  const lines = claims.items.map((claim) => claimLine(claim, tokens, deps.cluster));
  const just = extras.claimId === undefined ? undefined : lines.find((line) => line.id === extras.claimId);
  const data = {
    title: 'Earnings',
    wallet: balances.wallet,
    minimum: sol(minimum),
    balances: balanceRows(balances, tokens),
    claimable: sol(claimable),
    canClaim: balances.wallet !== null && claimable >= minimum,
    shortBy: claimable < minimum ? sol(minimum - claimable) : null,
    requestKey: formRequestKey(),
    claims: lines,
    claimTotal: claims.total,
    previous: page > 1 ? page - 1 : null,
    next: page * CLAIMS_PER_PAGE < claims.total ? page + 1 : null,
    just,
    error: extras.error,
  };
  reply.header('cache-control', 'no-store');
  return reply.code(extras.status ?? 200).view('earnings', pageData(caller, data, 'earnings'));
}

/** The balances table: SOL, then each mint's tokens. */
function balanceRows(balances: RewardBalances, tokens: ReadonlyMap<string, TransferToken>) {
  return [
    {
      asset: 'SOL',
      what: 'Flat fee shares',
      accrued: sol(balances.lamports.accrued),
      claimed: sol(balances.lamports.claimed),
      claimable: sol(balances.lamports.claimable),
    },
    ...balances.tokens.map((token) => {
      const show = (raw: bigint) => amountOf(token.mint, raw, tokens).amount;
      return {
        asset: amountOf(token.mint, 0n, tokens).name,
        mint: token.mint,
        what: 'Percentage fee shares',
        accrued: show(token.accruedRaw),
        claimed: show(token.claimedRaw),
        claimable: show(token.claimableRaw),
      };
    }),
  ];
}

/**
 * `GET /dashboard/earnings`: the signed-in key's rewards as `GET /rewards` reads them (accrued,
 * claimed, claimable; lamports and each mint's tokens), the claim form, and the claims with their
 * payout transactions as `GET /rewards/claims` lists them. `POST /dashboard/earnings/claim`
 * claims as `POST /rewards/claim` does: the form carries a key of its own, so sending it twice
 * answers the same claim.
 */
export async function earningsPage(app: FastifyInstance, deps: EarningsDeps) {
  const show = (request: FastifyRequest, reply: FastifyReply, extras?: Parameters<typeof showEarnings>[3]) =>
    showEarnings(deps, request, reply, extras);

  app.get('/earnings', async (request, reply) => {
    const claim = formField(request.query, 'claim');
    return show(request, reply, /^\d{1,16}$/.test(claim) ? { claimId: Number(claim) } : {});
  });

  app.post('/earnings/claim', async (request, reply) => {
    const requestKey = formField(request.body, 'requestKey');
    if (!REQUEST_KEY.test(requestKey)) {
      return show(request, reply, {
        status: 400,
        error: 'This form is out of date. Claim again from this page.',
      });
    }
    const { owner, settings, apiKeyId } = request.consoleCaller.auth;
    try {
      const claim = await claimRewards(
        deps.claims,
        {
          owner,
          minimumLamports: minimumClaimLamports(settings, deps.minClaimLamports),
          request: { apiKeyId, idempotencyKey: requestKey },
        },
        { waitMs: CLAIM_WAIT_MS, log: request.log },
      );
      return reply.redirect(`/dashboard/earnings?claim=${claim.id}`, 303);
    } catch (error) {
      if (!isAppError(error)) throw error;
      return show(request, reply, { status: error.status, error: error.message });
    }
  });
}
