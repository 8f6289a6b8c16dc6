import { isSolanaError, SOLANA_ERROR__INSTRUCTION_ERROR__CUSTOM, type TransactionError } from '@solana/kit';
import * as splToken from '@solana-program/token';

/**
 * Custom error codes of the router program, as `Custom(code)` in a failed instruction. The table
 * mirrors programs/router/errors.h; a test keeps the two identical.
 */
export const ROUTER_ERRORS = {
  6000: { name: 'InvalidInstruction', message: 'unknown instruction or malformed instruction data' },
  6001: { name: 'NotEnoughAccounts', message: 'fewer accounts than the instruction needs' },
  6002: { name: 'TooManyAccounts', message: 'more accounts than the instruction accepts' },
  6003: { name: 'MissingSignature', message: 'a required signer did not sign' },
  6004: { name: 'AccountNotWritable', message: 'an account the instruction changes is read-only' },
  6005: { name: 'InvalidAccountOwner', message: 'an account is owned by the wrong program' },
  6006: { name: 'InvalidPda', message: 'an address does not match its seeds' },
  6007: { name: 'InvalidAccountData', message: 'an account has the wrong size or type tag' },
  6008: { name: 'AccountAlreadyInitialized', message: 'an account to create already exists' },
  6009: { name: 'DuplicateAccount', message: 'the same account was passed twice where that is unsafe' },
  6010: { name: 'ArithmeticOverflow', message: 'checked arithmetic overflowed' },
  6011: { name: 'InvalidProgramAccount', message: 'the system, token or router program account is wrong' },
  6012: { name: 'NotUpgradeAuthority', message: 'config init not signed by the program upgrade authority' },
  6013: { name: 'NotAdmin', message: 'config update not signed by the admin' },
  6014: { name: 'InvalidRentSysvar', message: 'the rent sysvar holds a threshold this program cannot apply' },
  6015: { name: 'InvalidHopCount', message: 'hop count outside 3..10' },
  6016: { name: 'InvalidFeeParameters', message: 'fee basis points above 10000' },
  6017: {
    name: 'InvalidAmount',
    message: "zero amount, nothing left after the fee, or a native net amount below a wallet's rent",
  },
  6018: { name: 'InvalidSchedule', message: 'release times or deadline inconsistent' },
  6019: { name: 'InvalidMint', message: "mint account invalid or not the route's mint" },
  6020: { name: 'InvalidTokenAccount', message: 'a token account is missing, uninitialised or malformed' },
  6021: { name: 'InvalidFeeAccount', message: 'a fee account is not the one fixed in the route or config' },
  6022: {
    name: 'InvalidRouteParameters',
    message:
      'a zero key, the route as recipient, or a recipient token account on a native route or none on an SPL one',
  },
  6023: { name: 'HopCountMismatch', message: "the caller's existing hop count differs from the route's" },
  6024: { name: 'TooManyHops', message: 'more intermediate accounts than the route has hops' },
  6025: { name: 'RouteNotDeploying', message: 'the route is past deployment' },
  6026: { name: 'DeploymentIncomplete', message: 'intermediate accounts still missing' },
  6027: { name: 'InvalidStepAccount', message: 'a step account does not belong to this route and index' },
  6028: { name: 'InvalidStepIndex', message: 'step index outside the route' },
  6029: { name: 'InvalidOrchestrator', message: 'orchestrator config missing or of another source' },
  6030: {
    name: 'InvalidRecipientAccount',
    message: "recipient token account (or native route's wallet) not the route's or not the recipient's",
  },
  6031: { name: 'NotKeeper', message: "signer is not the route's keeper" },
  6032: { name: 'RouteNotActive', message: 'the route is not in a state that allows this' },
  6033: { name: 'ScreeningPending', message: 'the route awaits its screening verdict' },
  6034: { name: 'RouteFlagged', message: 'screening flagged the route' },
  6035: { name: 'StepAlreadyExecuted', message: 'the step has already run' },
  6036: { name: 'StepOutOfOrder', message: 'an earlier step has not run yet' },
  6037: { name: 'StepNotDue', message: "the step's release time has not come" },
  6038: { name: 'DeadlinePassed', message: "the route's deadline has passed" },
  6039: {
    name: 'WrongSourceAccount',
    message: "the step's source token account is not the fixed one or holds too little",
  },
  6040: {
    name: 'WrongDestination',
    message:
      "the step's destination is not the fixed next hop (or recipient wallet), or not an open token account of the recipient",
  },
  6041: { name: 'NotSource', message: "signer is not the route's source wallet" },
  6042: { name: 'RouteSettled', message: 'a settled route cannot be rescued' },
  6043: { name: 'RouteNotRescuable', message: 'active and before its deadline' },
  6044: { name: 'RouteNotReclaimable', message: 'rent is reclaimed only after settlement or rescue' },
  6045: { name: 'UnknownRouteAccount', message: 'an account to close is not a live account of the route' },
  6046: {
    name: 'InvalidSourceTokenAccount',
    message: "rescue destination is not the source's token account",
  },
  6047: { name: 'OrchestratorHasOpenRoutes', message: 'routes of this source are still open' },
  6048: { name: 'NotScreeningAuthority', message: 'signer is not the configured screening authority' },
  6049: { name: 'ScreeningNotPending', message: 'the route has no pending screening' },
  6050: { name: 'InvalidVerdict', message: 'verdict is neither verified nor flagged' },
  6051: { name: 'InvalidConfig', message: 'protocol config missing or malformed' },
  6052: {
    name: 'DepositAboveMaximum',
    message: "the config's screening deposit exceeds what the source agreed to",
  },
  6053: { name: 'NotPlatformWallet', message: "a withdrawal not signed by the config's platform wallet" },
  6054: {
    name: 'WithdrawalTooLarge',
    message: 'a withdrawal would leave the config below its rent-exempt minimum',
  },
} as const satisfies Record<number, { name: string; message: string }>;

export type RouterErrorCode = keyof typeof ROUTER_ERRORS;
export type RouterErrorName = (typeof ROUTER_ERRORS)[RouterErrorCode]['name'];

/** Code of a router error by name, for assertions and matching. */
export const ROUTER_ERROR_CODES = Object.fromEntries(
  Object.entries(ROUTER_ERRORS).map(([code, { name }]) => [name, Number(code)]),
) as Record<RouterErrorName, RouterErrorCode>;

/** Name of a router program error code, or undefined when the code is not the router's. */
export function routerErrorName(code: number): RouterErrorName | undefined {
  return (ROUTER_ERRORS as Record<number, { name: RouterErrorName }>)[code]?.name;
}

/** The router error carried by a kit `SolanaError` (a custom instruction error), if any. */
export function routerErrorFromSolanaError(error: unknown): RouterErrorName | undefined {
  if (!isSolanaError(error, SOLANA_ERROR__INSTRUCTION_ERROR__CUSTOM)) return undefined;
  return routerErrorName(Number(error.context.code));
}

/** SPL Token's error name of a custom error code, if it is one of SPL Token's. */
export function tokenErrorName(code: number): string | undefined {
  return TOKEN_ERROR_NAMES.get(code);
}

/** SPL Token's error names by code, from its client's `TOKEN_ERROR__*` constants (17: `AccountFrozen`). */
const TOKEN_ERROR_NAMES = new Map(
  Object.entries(splToken).flatMap(([key, code]) =>
    key.startsWith('TOKEN_ERROR__') && typeof code === 'number'
      ? [
          [
            code,
            key
              .slice('TOKEN_ERROR__'.length)
              .toLowerCase()
              .replace(/(?:^|_)(.)/g, (_, c) => c.toUpperCase()),
          ],
        ]
      : [],
  ),
);

/**
 * A router instruction's custom error code in words: the router's error with its meaning, or the
 * error of SPL Token, the one program it calls that fails with codes of its own (below 6000).
 */
export function describeRouterFailure(code: number): string {
  const name = routerErrorName(code);
  if (name) return `${name}: ${ROUTER_ERRORS[code as RouterErrorCode].message}`;
  const token = TOKEN_ERROR_NAMES.get(code);
  return token ? `SPL Token: ${token}` : `custom program error ${code}`;
}

/** The custom program error (the router's, or SPL Token's) a transaction failed with, if any. */
export function customErrorCode(error: TransactionError | undefined): number | undefined {
  const failed = (error as { InstructionError?: [number, unknown] } | undefined)?.InstructionError?.[1];
  const custom = (failed as { Custom?: number | bigint } | undefined)?.Custom;
  return custom === undefined ? undefined : Number(custom);
}

/** A transaction's error in words, naming the router's (or SPL Token's) error when it is one. */
export function describeTransactionError(error: TransactionError | undefined): string {
  const custom = customErrorCode(error);
  if (custom !== undefined) return describeRouterFailure(custom);
  return JSON.stringify(error ?? 'unknown error', (_, value) =>
    typeof value === 'bigint' ? value.toString() : value,
  );
}
