import { setTimeout as delay } from 'node:timers/promises';
import {
  type Address,
  appendTransactionMessageInstructions,
  type Base64EncodedWireTransaction,
  createKeyPairSignerFromPrivateKeyBytes,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  type Instruction,
  type KeyPairSigner,
  pipe,
  type Signature,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type TransactionError,
} from '@solana/kit';
import {
  setTransactionMessageComputeUnitPrice,
  updateOrAppendSetComputeUnitLimitInstruction,
} from '@solana-program/compute-budget';
import { CLOCK_SYSVAR, decodeClockAccount } from '../chain/accounts.ts';
import { isChainError } from '../chain/errors.ts';
import { decodeRoute, type Route } from '../chain/router/accounts.ts';
import { describeRouterFailure, routerErrorName, tokenErrorName } from '../chain/router/errors.ts';
import { COMPUTE_UNIT_LIMITS } from '../chain/router/footprint.ts';
import {
  getExecuteStepAccounts,
  getExecuteStepInstruction,
  getMarkFailedInstruction,
} from '../chain/router/instructions.ts';
import { findStepPda } from '../chain/router/pda.ts';
import type {
  AccountReader,
  BlockHeightReader,
  BlockhashLifetime,
  BlockhashReader,
  ClockReader,
  SignatureStatusReader,
  TransactionSender,
} from '../chain/types.ts';
import type { Clock } from '../domain/clock.ts';
import { integratorSharesOfPaid } from '../domain/rewards.ts';
import { hopRetryDelayMs } from '../domain/route.ts';
import type { RouteRecord, Transfer } from '../domain/transfer.ts';
import type { Db } from '../store/db.ts';
import type { ClaimedRoute, HopStore, StoredHopTransaction } from '../store/hops.ts';
import type { TransferStore } from '../store/transfers.ts';
import { readRoute, recoveryOf } from './route-reads.ts';

/** What screening a route before its first hop decided (see src/use-cases/screening.ts). */
export type ScreeningOutcome = 'verified' | 'flagged' | 'unavailable';

export interface KeeperDeps {
  db: Pick<Db, 'transaction'>;
  chain: AccountReader &
    ClockReader &
    BlockhashReader &
    BlockHeightReader &
    SignatureStatusReader &
    TransactionSender;
  hops: HopStore;
  transfers: Pick<TransferStore, 'markRecoverable'>;
  programAddress: Address;
  /** Screens a route that awaits its verdict, and records the verdict on chain. */
  screen(transfer: Transfer & { route: RouteRecord }, route: Route): Promise<ScreeningOutcome>;
  clock: Clock;
  /** How often a sent hop's status is read while it has not landed. */
  pollMs?: number;
  /** Counts what happened, for metrics and logs. */
  observe?(event: KeeperEvent): void;
  /** A number in [0, 1) that spreads retries out (Math.random unless a test fixes it). */
  random?: () => number;
}

/** What the keeper reports about its work on a route. */
export type KeeperEvent =
  | { kind: 'route_screened'; transferId: number; outcome: Exclude<ScreeningOutcome, 'unavailable'> }
  /** `resent`: the bytes were signed and stored by an earlier attempt (whose worker may have died). */
  | { kind: 'hop_sent'; transferId: number; step: number; signature: string; resent: boolean }
  /**
   * `recovered`: it had landed before this attempt, whose predecessor stopped before recording it;
   * `settled`: the last hop, the transfer is complete.
   */
  | {
      kind: 'hop_landed';
      transferId: number;
      step: number;
      signature: string;
      lateSeconds: number;
      recovered: boolean;
      settled: boolean;
    }
  | { kind: 'hop_retried'; transferId: number; step: number; reason: string }
  | { kind: 'route_failed'; transferId: number; reason: string }
  | { kind: 'keeper_low'; transferId: number; lamports: bigint };

/** How the keeper answers what the chain said of a hop. */
type Verdict =
  | { kind: 'not_due' }
  | { kind: 'moved_on' }
  | { kind: 'awaits_screening' }
  | { kind: 'transient'; reason: string }
  | { kind: 'permanent'; reason: string };

/**
 * A hop's transaction error, classified. Permanent only on a definite verdict about this route:
 * the router program's own error, or SPL Token's (a frozen account), raised by the hop itself.
 * Anything else (out of compute, an account the runtime could not load or charge rent for, a
 * transaction-level refusal) says nothing about the route and is retried: the route then either
 * lands or reaches its deadline, after which the source rescues it.
 */
export function classifyHopError(error: TransactionError | undefined): Verdict {
  const failed = (error as { InstructionError?: [number, unknown] } | undefined)?.InstructionError?.[1];
  const custom = (failed as { Custom?: number | bigint } | undefined)?.Custom;
  const code = custom === undefined ? undefined : Number(custom);
  const name = code === undefined ? undefined : routerErrorName(code);
  switch (name) {
    case 'StepNotDue':
      return { kind: 'not_due' };
    case 'StepAlreadyExecuted':
    case 'StepOutOfOrder':
    // Past its deadline the route is recorded recoverable as it is, by the next round's read.
    case 'DeadlinePassed':
      return { kind: 'moved_on' };
    case 'ScreeningPending':
      return { kind: 'awaits_screening' };
  }
  if (code !== undefined && (name !== undefined || tokenErrorName(code) !== undefined)) {
    return { kind: 'permanent', reason: describeRouterFailure(code) };
  }
  return { kind: 'transient', reason: JSON.stringify(error ?? 'unknown') };
}

/** Signs a transaction paid and signed by the keeper alone. */
async function signedByKeeper(
  keeper: KeyPairSigner,
  lifetime: BlockhashLifetime,
  instructions: readonly Instruction[],
  microLamportsPerCu: bigint,
  computeUnitLimit: number,
): Promise<StoredHopTransaction> {
  const transaction = await pipe(
    createTransactionMessage({ version: 0 }),
    (message) => setTransactionMessageFeePayerSigner(keeper, message),
    (message) => setTransactionMessageLifetimeUsingBlockhash(lifetime, message),
    (message) => appendTransactionMessageInstructions(instructions, message),
    (message) => setTransactionMessageComputeUnitPrice(microLamportsPerCu, message),
    (message) => updateOrAppendSetComputeUnitLimitInstruction(computeUnitLimit, message),
    (message) => signTransactionMessageWithSigners(message),
  );
  return {
    base64: getBase64EncodedWireTransaction(transaction),
    signature: getSignatureFromTransaction(transaction),
    validUntil: lifetime.lastValidBlockHeight,
  };
}

/**
 * Sends a stored transaction (resending the same bytes is harmless) and waits until it lands or
 * its blockhash expires. Answers null when it landed and succeeded, its error otherwise, or
 * 'expired'. A refusal in preflight counts as landing with that error: nothing was charged.
 */
async function sendAndWait(
  deps: KeeperDeps,
  transaction: StoredHopTransaction,
): Promise<TransactionError | 'expired' | null> {
  try {
    await deps.chain.sendTransaction(transaction.base64 as Base64EncodedWireTransaction);
  } catch (error) {
    if (isChainError(error, 'CHAIN_PREFLIGHT_FAILED') && error.context.transactionError) {
      return error.context.transactionError;
    }
    if (!isChainError(error, 'CHAIN_BLOCKHASH_NOT_FOUND')) throw error;
  }
  const signature = transaction.signature as Signature;
  for (;;) {
    const [status] = await deps.chain.getSignatureStatuses([signature]);
    if (status) return status.err;
    if ((await deps.chain.getBlockHeight()) > transaction.validUntil) {
      // It may have landed in its last valid block, after the status above was read.
      const [last] = await deps.chain.getSignatureStatuses([signature], { searchTransactionHistory: true });
      return last ? last.err : 'expired';
    }
    await delay(deps.pollMs ?? 400);
  }
}

/**
 * What a hop needs of the chain, in one read: the route's account (its status, next step,
 * screening, deadline, the accounts a step moves between), the keeper's balance and the chain's
 * time. The whole route (every account, each address derived) is read only to settle it or give
 * up on it.
 */
async function readHopState(
  deps: KeeperDeps,
  transfer: Transfer & { route: RouteRecord },
): Promise<{ route: Route | null; keeperLamports: bigint; chainNow: bigint }> {
  const [route, keeper, clock] = await deps.chain.getAccounts([
    transfer.route.address,
    transfer.route.keeper,
    CLOCK_SYSVAR,
  ]);
  return {
    route: route && route.programAddress === deps.programAddress ? decodeRoute(route.data) : null,
    keeperLamports: keeper?.lamports ?? 0n,
    chainNow: decodeClockAccount(clock ?? null).unixTimestamp,
  };
}

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
  const { claim } = claimed;
  const transfer = claimed.transfer as Transfer & { route: RouteRecord };
  const retryDelay = (attempt: number) => hopRetryDelayMs(attempt, (deps.random ?? Math.random)());
  const id = transfer.id;
  const release = (input: Parameters<HopStore['release']>[2]) => deps.hops.release(id, claim, input);
  const readAt = deps.clock.now();
  const { route, keeperLamports, chainNow } = await readHopState(deps, transfer);
  if (!route)
    return release({ retryAt: new Date(deps.clock.now().getTime() + retryDelay(claimed.hopAttempts)) });
  const schedule = transfer.route.schedule!;
  const dueAt = (step: number) => schedule.firstReleaseAt + BigInt(step) * BigInt(schedule.intervalSecs);

  // Marked failed on chain by a worker that did not live to record it.
  if (route.status === 'failed') return recordFailure(deps, transfer, null);
  if (route.status === 'active' && chainNow > route.deadlineAt) {
    // Nothing can execute any more, and the source may rescue the route as it is.
    const recovery = recoveryOf(await readRoute(deps.chain, deps.programAddress, transfer), chainNow);
    const now = deps.clock.now();
    await deps.db.transaction((tx) =>
      deps.transfers.markRecoverable(tx, id, {
        lastError: {
          code: 'MH_031',
          message: `The route passed its deadline before hop ${transfer.hopsCompleted + 1} of ${transfer.hops} could run; the source can rescue everything it holds.`,
        },
        recovery,
        now,
      }),
    );
    deps.observe?.({ kind: 'route_failed', transferId: id, reason: 'past its deadline' });
    return;
  }
  // A flagged verdict is on chain but, for the same reason, perhaps not recorded yet.
  if (route.screening === 'pending' || route.screening === 'flagged') {
    const outcome = await deps.screen(transfer, route);
    if (outcome !== 'unavailable') deps.observe?.({ kind: 'route_screened', transferId: id, outcome });
    if (outcome === 'verified') return release({ dueAt: dueAt(transfer.hopsCompleted), attempts: 0 });
    if (outcome === 'unavailable') {
      deps.observe?.({
        kind: 'hop_retried',
        transferId: id,
        step: transfer.hopsCompleted,
        reason: 'screening unavailable',
      });
      return release({
        retryAt: new Date(deps.clock.now().getTime() + retryDelay(claimed.hopAttempts)),
        attempts: claimed.hopAttempts + 1,
      });
    }
    return; // flagged: the screening step recorded the route as recoverable
  }

  const step = transfer.hopsCompleted;
  const keeper = await createKeyPairSignerFromPrivateKeyBytes(claimed.keeperPrivateKey);
  const record = async (signature: string, recovered: boolean) => {
    const last = step === transfer.hops - 1;
    // Settling reads the whole route and the clock again; otherwise the chain's time of landing is
    // that of this round's read and the time since.
    const [clock, snapshot] = last
      ? await Promise.all([deps.chain.getClock(), readRoute(deps.chain, deps.programAddress, transfer)])
      : [null, null];
    const now = deps.clock.now();
    const landedAt =
      clock?.unixTimestamp ?? chainNow + BigInt(Math.floor((now.getTime() - readAt.getTime()) / 1000));
    // A transfer completes only on a route the chain shows settled (or closed already by the
    // source's reclaim, which only a settled route allows), and the integrator earns its share of
    // what that route paid.
    const onChain = snapshot?.route?.data;
    if (onChain && onChain.status !== 'settled') {
      throw new Error(
        `route ${transfer.route.address} ran hop ${step} as its last, but is ${onChain.status}`,
      );
    }
    const paid = onChain
      ? {
          percentFeeRaw: onChain.platformFeeTokens + onChain.integratorFeeTokens,
          flatFeeLamports: onChain.platformFlatLamports + onChain.integratorFlatLamports,
        }
      : { percentFeeRaw: transfer.percentFeeRaw, flatFeeLamports: transfer.totalFlatFeeLamports };
    const then = snapshot
      ? {
          settled: {
            recovery: recoveryOf(snapshot, landedAt),
            shares: integratorSharesOfPaid(transfer, paid),
          },
        }
      : { nextDueAt: dueAt(step + 1) };
    await deps.db.transaction((tx) => deps.hops.recordHop(tx, id, { step, signature, then, now }));
    deps.observe?.({
      kind: 'hop_landed',
      transferId: id,
      step,
      signature,
      lateSeconds: Number(landedAt - dueAt(step)),
      recovered,
      settled: last,
    });
  };

  // The chain is ahead of the record: the hop landed but its worker died before recording it.
  // Only the stored transaction can have run it (every hop is stored before it is sent).
  if (route.nextStep > step) {
    const stored = claimed.hopTransaction;
    // Its worker may have died long ago: the node's recent status cache may have forgotten it.
    const [status] = stored
      ? await deps.chain.getSignatureStatuses([stored.signature as Signature], {
          searchTransactionHistory: true,
        })
      : [];
    if (!stored || !status || status.err !== null) {
      throw new Error(
        `hop ${step} of route ${transfer.route.address} ran on chain, but not by its stored transaction`,
      );
    }
    return record(stored.signature, true);
  }
  const needed = BigInt(transfer.hops - step) * 5_000n;
  if (keeperLamports < needed) {
    deps.observe?.({ kind: 'keeper_low', transferId: id, lamports: keeperLamports });
  }

  // A transaction whose blockhash expired before it landed never ran: a new one takes its place.
  const expiredUnlanded = () =>
    deps.observe?.({ kind: 'hop_retried', transferId: id, step, reason: 'expired before it landed' });
  let transaction = claimed.hopTransaction;
  if (transaction && (await deps.chain.getBlockHeight()) > transaction.validUntil) {
    const [status] = await deps.chain.getSignatureStatuses([transaction.signature as Signature], {
      searchTransactionHistory: true,
    });
    if (!status) {
      expiredUnlanded();
      transaction = null;
    }
  }
  if (!transaction) {
    const [[stepAddress], lifetime] = await Promise.all([
      findStepPda(transfer.route.address, step, deps.programAddress),
      deps.chain.getLatestBlockhash(),
    ]);
    transaction = await signedByKeeper(
      keeper,
      lifetime,
      [
        getExecuteStepInstruction(
          {
            keeper,
            index: step,
            accounts: getExecuteStepAccounts(transfer.route.address, route, step, stepAddress),
          },
          deps.programAddress,
        ),
      ],
      transfer.route.hopPriorityMicroLamports,
      COMPUTE_UNIT_LIMITS.executeStep,
    );
    // Kept before it is sent: if this worker dies from here on, the next one sends these bytes.
    if (!(await deps.hops.storeHopTransaction(id, claim, transaction))) return;
  }

  deps.observe?.({
    kind: 'hop_sent',
    transferId: id,
    step,
    signature: transaction.signature,
    resent: transaction === claimed.hopTransaction,
  });
  const outcome = await sendAndWait(deps, transaction);
  if (outcome === null) return record(transaction.signature, false);
  if (outcome === 'expired') {
    expiredUnlanded();
    return release({ forgetHopTransaction: true });
  }
  const verdict = classifyHopError(outcome);
  const retryAt = new Date(deps.clock.now().getTime() + retryDelay(claimed.hopAttempts));
  switch (verdict.kind) {
    case 'not_due':
      // The chain's clock has not reached the due time the worker read: look again shortly.
      return release({ retryAt, forgetHopTransaction: true });
    case 'moved_on':
    case 'awaits_screening':
      // Another transaction moved the route (or it awaits screening): read it again next round.
      return release({ forgetHopTransaction: true });
    case 'transient':
      deps.observe?.({ kind: 'hop_retried', transferId: id, step, reason: verdict.reason });
      return release({ retryAt, attempts: claimed.hopAttempts + 1, forgetHopTransaction: true });
    case 'permanent':
      return failRoute(deps, transfer, keeper, verdict.reason);
  }
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
  const marked = await signedByKeeper(
    keeper,
    await deps.chain.getLatestBlockhash(),
    [getMarkFailedInstruction({ keeper, route: transfer.route.address }, deps.programAddress)],
    transfer.route.hopPriorityMicroLamports,
    COMPUTE_UNIT_LIMITS.executeStep,
  );
  const outcome = await sendAndWait(deps, marked);
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
