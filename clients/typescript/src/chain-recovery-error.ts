import type { Address } from '@solana/kit';
import type { ChainRecoveryKind, RouteAccount, RouteStatus } from './router.ts';

/*
 * When the router program lets a source recover its route, checked before anything is signed so
 * that a refusal says why in words, and for an active route, when it becomes possible.
 */

/** Why the program would refuse the recovery now. */
export type ChainRecoveryErrorCode =
  /** The account at the address is not a route of this program. */
  | 'not_a_route'
  /** The signer is not the route's source wallet, the only key the program accepts. */
  | 'not_source'
  /** A rescue of an active route before its deadline: `deadlineAt` says when it becomes possible. */
  | 'before_deadline'
  /** A rescue of a settled route: the recipient was paid; its rent comes back with a reclaim. */
  | 'settled'
  /** A reclaim of a route that has neither settled nor been rescued. */
  | 'not_ended';

/** The program would refuse this recovery now; `code` says why, the fields say what the chain showed. */
export class ChainRecoveryError extends Error {
  readonly code: ChainRecoveryErrorCode;
  readonly route: Address;
  /** The route's status, when it is a route. */
  readonly status: RouteStatus | undefined;
  /** `before_deadline`: the route's deadline (unix seconds); it is rescuable once the chain's clock is past it. */
  readonly deadlineAt: bigint | undefined;
  /** The chain's clock when read (unix seconds). */
  readonly chainTime: bigint | undefined;

  constructor(
    code: ChainRecoveryErrorCode,
    message: string,
    context: { route: Address; status?: RouteStatus; deadlineAt?: bigint; chainTime?: bigint },
  ) {
    super(message);
    this.name = 'ChainRecoveryError';
    this.code = code;
    this.route = context.route;
    this.status = context.status;
    this.deadlineAt = context.deadlineAt;
    this.chainTime = context.chainTime;
  }
}

/** Whether `error` is a {@link ChainRecoveryError}, of one of `codes` when given. */
export function isChainRecoveryError(
  error: unknown,
  ...codes: ChainRecoveryErrorCode[]
): error is ChainRecoveryError {
  return error instanceof ChainRecoveryError && (codes.length === 0 || codes.includes(error.code));
}

const isoTime = (unix: bigint) => new Date(Number(unix) * 1000).toISOString();

/**
 * Throws the error the program would answer with, if any: who may recover, and when (Rescue:
 * `deploying`, `failed`, `flagged`, `rescued`, or `active` past its deadline by the chain's
 * Clock; Reclaim: `settled` or `rescued`).
 */
export function assertRecoveryAllowed(
  kind: ChainRecoveryKind,
  address: Address,
  route: RouteAccount,
  signer: Address,
  chainTime: bigint,
) {
  const context = { route: address, status: route.status, chainTime };
  if (route.source !== signer) {
    throw new ChainRecoveryError(
      'not_source',
      `route ${address} belongs to source ${route.source}, not to signer ${signer}: only its source can recover it`,
      context,
    );
  }
  if (kind === 'reclaim') {
    if (route.status === 'settled' || route.status === 'rescued') return;
    throw new ChainRecoveryError(
      'not_ended',
      `route ${address} is ${route.status}: its rent is reclaimed once it settled or was rescued${route.status === 'active' ? '' : '; rescue it instead'}`,
      context,
    );
  }
  if (route.status === 'settled') {
    throw new ChainRecoveryError(
      'settled',
      `route ${address} settled (the recipient was paid): reclaim its rent instead`,
      context,
    );
  }
  if (route.status === 'active' && chainTime <= route.deadlineAt) {
    throw new ChainRecoveryError(
      'before_deadline',
      `route ${address} is active until its deadline, ${isoTime(route.deadlineAt)} (unix ${route.deadlineAt}); it becomes rescuable once the chain's clock is past it (now ${isoTime(chainTime)})`,
      { ...context, deadlineAt: route.deadlineAt },
    );
  }
}
