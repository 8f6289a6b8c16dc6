import type { Address, TransactionError } from '@solana/kit';
import { CLOCK_SYSVAR, decodeClockAccount } from '../chain/accounts.ts';
import { decodeRoute, type Route } from '../chain/router/accounts.ts';
import {
  customErrorCode,
  describeRouterFailure,
  routerErrorName,
  tokenErrorName,
} from '../chain/router/errors.ts';
import type { AccountReader } from '../chain/types.ts';
import type { RouteRecord, Transfer } from '../domain/transfer.ts';

/*
 * The keeper's transactions on chain: signing one it alone pays for, sending it until it lands or
 * its blockhash expires, reading what a hop needs, and what a hop's error means.
 */

/** How the keeper answers what the chain said of a hop. */
export type Verdict =
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
  const code = customErrorCode(error);
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

/**
 * What a hop needs of the chain, in one read: the route's account (its status, next step,
 * screening, deadline, the accounts a step moves between), the keeper's balance and the chain's
 * time. The whole route (every account, each address derived) is read only to settle it or give
 * up on it.
 */
export async function readHopState(
  deps: { chain: AccountReader; programAddress: Address },
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
