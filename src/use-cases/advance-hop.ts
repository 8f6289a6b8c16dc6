import {
  createKeyPairSignerFromPrivateKeyBytes,
  type KeyPairSigner,
  type Signature,
  type TransactionError,
} from '@solana/kit';
import { chargedFee, feePaid } from '../chain/fees.ts';
import { landTransaction, type SignedTransaction, signWithBudget } from '../chain/landing.ts';
import type { Route } from '../chain/router/accounts.ts';
import { COMPUTE_UNIT_LIMITS } from '../chain/router/footprint.ts';
import {
  getExecuteStepAccounts,
  getExecuteStepInstruction,
  getMarkFailedInstruction,
} from '../chain/router/instructions.ts';
import { findStepPda } from '../chain/router/pda.ts';
import type { RouteSnapshot } from '../chain/router/recovery.ts';
import { integratorSharesOfPaid } from '../domain/rewards.ts';
import { hopRetryDelayMs } from '../domain/route.ts';
import type { RouteRecord, Transfer } from '../domain/transfer.ts';
import type { ClaimedRoute, HopStore, StoredHopTransaction } from '../store/hops.ts';
import { keeperPrice, priceAfterExpiry } from './hop-fees.ts';
import { classifyHopError, readHopState } from './hop-transactions.ts';
import type { KeeperDeps } from './keeper-deps.ts';
import type { RoutedTransfer } from './recovery.ts';
import { readRoute, recoveryOf } from './route-reads.ts';

export type { KeeperDeps, KeeperEvent } from './keeper-deps.ts';

/** How the keeper lands its transactions: paced by the service's clock, read as often as it says. */
const landing = (deps: KeeperDeps) => ({ now: () => deps.clock.now().getTime(), pollMs: deps.pollMs });

/** One round of the keeper's work on a claimed route, as read at its start. */
interface HopRound {
  deps: KeeperDeps;
  claimed: ClaimedRoute;
  transfer: RoutedTransfer;
  /** The route's account as this round read it. */
  route: Route;
  /** The chain's time of this round's read, and the service's. */
  chainNow: bigint;
  readAt: Date;
  /** The step this round runs. */
  step: number;
}

/** Gives the claim back, with what the round learned. */
const release = (round: HopRound, input: Parameters<HopStore['release']>[2]) =>
  round.deps.hops.release(round.transfer.id, round.claimed.claim, input);

/** When to try again after a failed attempt, spread out so retries do not come in waves. */
const retryAt = ({ deps, claimed }: Pick<HopRound, 'deps' | 'claimed'>) =>
  new Date(deps.clock.now().getTime() + hopRetryDelayMs(claimed.hopAttempts, (deps.random ?? Math.random)()));

/** When a step is due on the route's schedule (chain seconds). */
const dueAt = (transfer: RoutedTransfer, step: number) => {
  const schedule = transfer.route.schedule!;
  return schedule.firstReleaseAt + BigInt(step) * BigInt(schedule.intervalSecs);
};

/**
 * Does what is due on one claimed route, then gives the claim back: screens a route awaiting its
 * verdict, or runs its next hop: the keeper signs it, stores the signed bytes and their signature,
 * sends them, waits for them to land and records the hop with its events (the last one settles
 * the transfer). A stored transaction is sent again as it is while its blockhash lives, and
 * replaced only once it has expired unlanded, so a hop never runs twice. Errors are classified by
 * the program's codes: not due (due again then), already executed (the chain is read and recorded),
 * transient (retried with backoff), permanent (the route is marked failed on chain, so the source
 * can rescue it).
 */
export async function advanceRoute(deps: KeeperDeps, claimed: ClaimedRoute): Promise<void> {
  const transfer = claimed.transfer as RoutedTransfer;
  const readAt = deps.clock.now();
  const { route, keeperLamports, chainNow } = await readHopState(deps, transfer);
  const step = transfer.hopsCompleted;
  if (!route) return deps.hops.release(transfer.id, claimed.claim, { retryAt: retryAt({ deps, claimed }) });
  const round: HopRound = { deps, claimed, transfer, route, chainNow, readAt, step };
  // Marked failed on chain by a worker that did not live to record it.
  if (route.status === 'failed') return recordFailure(deps, transfer, null);
  if (route.status === 'active' && chainNow > route.deadlineAt) return recordPastDeadline(round);
  // A flagged verdict is on chain but, for the same reason, perhaps not recorded yet.
  if (route.screening === 'pending' || route.screening === 'flagged') return screenFirst(round);
  // The chain is ahead of the record: the hop landed but its worker died before recording it.
  if (route.nextStep > step) return recordRecoveredHop(round);
  if (keeperLamports < BigInt(transfer.hops - step) * 5_000n) {
    deps.observe?.({ kind: 'keeper_low', transferId: transfer.id, lamports: keeperLamports });
  }
  const keeper = await createKeyPairSignerFromPrivateKeyBytes(claimed.keeperPrivateKey);
  const transaction = await hopTransaction(round, keeper);
  if (!transaction) return;
  // Stored bytes may have been sent by a worker that died: a node's refusal now is no verdict on them.
  const resumed = transaction === claimed.hopTransaction;
  const sent = () =>
    deps.observe?.({
      kind: 'hop_sent',
      transferId: transfer.id,
      step,
      signature: transaction.signature,
      resent: resumed,
    });
  const outcome = await landTransaction(deps.chain, transaction, { ...landing(deps), resumed, onSent: sent });
  if (outcome === null) return recordHop(round, transaction, false);
  return answerFailedHop(round, keeper, transaction, outcome);
}

/** Past its deadline nothing can execute any more, and the source may rescue the route as it is. */
async function recordPastDeadline({ deps, transfer, chainNow }: HopRound): Promise<void> {
  const recovery = recoveryOf(await readRoute(deps.chain, deps.programAddress, transfer), chainNow);
  const now = deps.clock.now();
  await deps.db.transaction((tx) =>
    deps.transfers.markRecoverable(tx, transfer.id, {
      lastError: {
        code: 'MH_031',
        message: `The route passed its deadline before hop ${transfer.hopsCompleted + 1} of ${transfer.hops} could run; the source can rescue everything it holds.`,
      },
      recovery,
      now,
    }),
  );
  deps.observe?.({ kind: 'route_failed', transferId: transfer.id, reason: 'past its deadline' });
}

/** Screens a route awaiting its verdict; a provider that cannot answer is asked again with backoff. */
async function screenFirst(round: HopRound): Promise<void> {
  const { deps, transfer, route, claimed } = round;
  const outcome = await deps.screen(transfer, route);
  if (outcome !== 'unavailable') deps.observe?.({ kind: 'route_screened', transferId: transfer.id, outcome });
  if (outcome === 'verified') return release(round, { dueAt: dueAt(transfer, round.step), attempts: 0 });
  if (outcome === 'unavailable') {
    deps.observe?.({
      kind: 'hop_retried',
      transferId: transfer.id,
      step: round.step,
      reason: 'screening unavailable',
    });
    return release(round, { retryAt: retryAt(round), attempts: claimed.hopAttempts + 1 });
  }
  // Flagged: the screening step recorded the route as recoverable.
}

/**
 * Records a hop the chain ran before its worker recorded it. Only the stored transaction can have
 * run it (every hop is stored before it is sent); its worker may have died long ago, so the
 * node's whole history is asked, not only its recent status cache.
 */
async function recordRecoveredHop(round: HopRound): Promise<void> {
  const stored = round.claimed.hopTransaction;
  const [status] = stored
    ? await round.deps.chain.getSignatureStatuses([stored.signature as Signature], {
        searchTransactionHistory: true,
      })
    : [];
  if (!stored || !status || status.err !== null) {
    throw new Error(
      `hop ${round.step} of route ${round.transfer.route.address} ran on chain, but not by its stored transaction`,
    );
  }
  return recordHop(round, stored, true);
}

/**
 * The transaction of this round's hop: the stored one while its blockhash lives (or it landed),
 * else a new one signed by the keeper and stored before it is sent, so that if this worker dies
 * from here on, the next one sends these bytes; priced from the market, raised above one that
 * expired unlanded, with the budget keeping the signatures of the hops left and of MarkFailed.
 * Null when the claim was lost meanwhile.
 */
async function hopTransaction(round: HopRound, keeper: KeyPairSigner): Promise<StoredHopTransaction | null> {
  const { deps, transfer, step } = round;
  const stored = round.claimed.hopTransaction;
  if (stored && (await deps.chain.getBlockHeight()) <= stored.validUntil) return stored;
  let least = 0n;
  if (stored) {
    const [status] = await deps.chain.getSignatureStatuses([stored.signature as Signature], {
      searchTransactionHistory: true,
    });
    if (status) return stored;
    // A transaction whose blockhash expired before it landed never ran: a new one takes its place.
    expiredUnlanded(round);
    // Whichever worker replaces it, the replacement offers more: the stored bytes say their price.
    least = priceAfterExpiry(deps, stored);
  }
  const [stepAddress] = await findStepPda(transfer.route.address, step, deps.programAddress);
  const accounts = getExecuteStepAccounts(transfer.route.address, round.route, step, stepAddress);
  const instructions = [getExecuteStepInstruction({ keeper, index: step, accounts }, deps.programAddress)];
  const [lifetime, price] = await Promise.all([
    deps.chain.getLatestBlockhash(),
    keeperPrice(deps, transfer, {
      payer: keeper.address,
      instructions,
      least,
      reservedSignatures: transfer.hops - step,
    }),
  ]);
  const transaction = await signWithBudget(deps.chain, keeper, {
    lifetime,
    instructions,
    microLamportsPerCu: price,
    fallbackUnits: COMPUTE_UNIT_LIMITS.executeStep,
  });
  return (await deps.hops.storeHopTransaction(transfer.id, round.claimed.claim, transaction))
    ? transaction
    : null;
}

const expiredUnlanded = ({ deps, transfer, step }: HopRound) =>
  deps.observe?.({ kind: 'hop_retried', transferId: transfer.id, step, reason: 'expired before it landed' });

/**
 * What the keeper does after a hop that did not land, by what the chain said of it; one that
 * failed on chain paid its fees from the route's budget.
 */
async function answerFailedHop(
  round: HopRound,
  keeper: KeyPairSigner,
  transaction: SignedTransaction,
  outcome: TransactionError | 'expired',
): Promise<void> {
  const { deps, transfer, step, claimed } = round;
  // Kept: a node whose reads lag may have hidden that it landed in its last valid block. The next
  // round reads the route, and replaces the transaction (at a higher price) only if the chain's
  // history lacks it.
  if (outcome === 'expired') return release(round, {});
  const verdict = classifyHopError(outcome);
  const answered = { forgetHopTransaction: true, feesPaid: await feePaid(deps.chain, transaction) };
  switch (verdict.kind) {
    case 'not_due':
      // The chain's clock has not reached the due time the worker read: look again shortly.
      return release(round, { ...answered, retryAt: retryAt(round) });
    case 'moved_on':
    case 'awaits_screening':
      // Another transaction moved the route (or it awaits screening): read it again next round.
      return release(round, answered);
    case 'transient':
      deps.observe?.({ kind: 'hop_retried', transferId: transfer.id, step, reason: verdict.reason });
      return release(round, { ...answered, retryAt: retryAt(round), attempts: claimed.hopAttempts + 1 });
    case 'permanent':
      return failRoute(deps, transfer, keeper, verdict.reason);
  }
}

/**
 * Records a landed hop with its events and the fees it paid. The last one settles the transfer:
 * only on a route the chain shows settled (or closed already by the source's reclaim, which only a
 * settled route allows), the integrator earning its share of what that route paid.
 */
async function recordHop(round: HopRound, hop: StoredHopTransaction, recovered: boolean): Promise<void> {
  const { deps, transfer, step } = round;
  const { signature } = hop;
  const last = step === transfer.hops - 1;
  // Settling reads the whole route and the clock again; otherwise the chain's time of landing is
  // that of this round's read and the time since.
  const [clock, snapshot] = last
    ? await Promise.all([deps.chain.getClock(), readRoute(deps.chain, deps.programAddress, transfer)])
    : [null, null];
  // It landed and succeeded: its fee is what its bytes ask for, no need to ask the node.
  const feesPaid = chargedFee(hop);
  const now = deps.clock.now();
  const landedAt =
    clock?.unixTimestamp ??
    round.chainNow + BigInt(Math.floor((now.getTime() - round.readAt.getTime()) / 1000));
  const then = snapshot
    ? {
        settled: {
          recovery: recoveryOf(snapshot, landedAt),
          shares: sharesOfSettled(transfer, snapshot, step),
        },
      }
    : { nextDueAt: dueAt(transfer, step + 1) };
  await deps.db.transaction((tx) =>
    deps.hops.recordHop(tx, transfer.id, { step, signature, feesPaid, then, now }),
  );
  deps.observe?.({
    kind: 'hop_landed',
    transferId: transfer.id,
    step,
    signature,
    lateSeconds: Number(landedAt - dueAt(transfer, step)),
    recovered,
    settled: last,
  });
}

/** The integrator's shares of what a settled route paid (the quote's fees when it is closed already). */
function sharesOfSettled(transfer: RoutedTransfer, snapshot: RouteSnapshot, step: number) {
  const onChain = snapshot.route?.data;
  if (onChain && onChain.status !== 'settled') {
    throw new Error(`route ${transfer.route.address} ran hop ${step} as its last, but is ${onChain.status}`);
  }
  const paid = onChain
    ? {
        percentFeeRaw: onChain.platformFeeTokens + onChain.integratorFeeTokens,
        flatFeeLamports: onChain.platformFlatLamports + onChain.integratorFlatLamports,
      }
    : { percentFeeRaw: transfer.percentFeeRaw, flatFeeLamports: transfer.totalFlatFeeLamports };
  return integratorSharesOfPaid(transfer, paid);
}

/**
 * Gives up on a route after a permanent hop failure: marks it failed on chain (which makes it
 * rescuable at once), then records it.
 */
async function failRoute(
  deps: KeeperDeps,
  transfer: Transfer & { route: RouteRecord },
  keeper: KeyPairSigner,
  reason: string,
): Promise<void> {
  const instructions = [
    getMarkFailedInstruction({ keeper, route: transfer.route.address }, deps.programAddress),
  ];
  const [lifetime, price] = await Promise.all([
    deps.chain.getLatestBlockhash(),
    // The last transaction the budget pays for.
    keeperPrice(deps, transfer, { payer: keeper.address, instructions, least: 0n, reservedSignatures: 0 }),
  ]);
  const marked = await signWithBudget(deps.chain, keeper, {
    lifetime,
    instructions,
    microLamportsPerCu: price,
    fallbackUnits: COMPUTE_UNIT_LIMITS.executeStep,
  });
  const outcome = await landTransaction(deps.chain, marked, landing(deps));
  if (outcome !== null)
    throw new Error(
      `marking route ${transfer.route.address} failed did not land: ${JSON.stringify(outcome)}`,
    );
  await recordFailure(deps, transfer, reason);
}

/**
 * Records phase `failed` for a route marked failed on chain, with why (when known) and what the
 * source can rescue.
 */
async function recordFailure(
  deps: KeeperDeps,
  transfer: Transfer & { route: RouteRecord },
  reason: string | null,
): Promise<void> {
  const chainNow = (await deps.chain.getClock()).unixTimestamp;
  const recovery = recoveryOf(await readRoute(deps.chain, deps.programAddress, transfer), chainNow);
  const now = deps.clock.now();
  await deps.db.transaction((tx) =>
    deps.hops.markFailed(tx, transfer.id, {
      lastError: {
        code: 'MH_031',
        message: `Hop ${transfer.hopsCompleted + 1} of ${transfer.hops} failed permanently${reason ? ` (${reason})` : ''}; the route is marked failed on chain and the source can rescue everything it holds.`,
      },
      recovery,
      now,
    }),
  );
  deps.observe?.({
    kind: 'route_failed',
    transferId: transfer.id,
    reason: reason ?? 'marked failed on chain',
  });
}
