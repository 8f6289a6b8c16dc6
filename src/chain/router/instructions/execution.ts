// The instructions of a route under way: its screening verdict, each step's move, and the keeper
// giving up.
import type { Address, Instruction, TransactionSigner } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { type Route, routeHolder } from '../accounts.ts';
import { ROUTER_PROGRAM_ADDRESS } from '../program.ts';
import { bytes, instruction, RouterInstruction, readonly, signerMeta, writable } from './encoding.ts';

export type ScreeningVerdict = 'verified' | 'flagged';

/** Records the screening verdict: refunds the deposit to the source, or forfeits it and flags the route. */
export function getScreenRouteInstruction(
  input: {
    authority: TransactionSigner;
    config: Address;
    route: Address;
    source: Address;
    platformWallet: Address;
    verdict: ScreeningVerdict;
  },
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Instruction {
  return instruction(
    programAddress,
    [
      signerMeta(input.authority, false),
      readonly(input.config),
      writable(input.route),
      writable(input.source),
      writable(input.platformWallet),
    ],
    bytes(RouterInstruction.ScreenRoute, input.verdict === 'verified' ? 1 : 2),
  );
}

export interface ExecuteStepAccounts {
  route: Address;
  step: Address;
  from: Address;
  /** The next holder; on the last step of a native-mint route, the recipient's wallet. */
  to: Address;
  /** Present for the last step only: where the fees go at settlement. */
  settlement?: {
    custody: Address;
    platformFeeToken: Address;
    integratorFeeToken: Address;
    platformWallet: Address;
    integratorWallet: Address;
  };
}

/** The accounts step `index` of a route must be executed with. */
export function getExecuteStepAccounts(
  routeAddress: Address,
  route: Route,
  index: number,
  step: Address,
): ExecuteStepAccounts {
  const last = index === route.hopCount - 1;
  return {
    route: routeAddress,
    step,
    from: routeHolder(route, index),
    to: routeHolder(route, index + 1),
    ...(last && {
      settlement: {
        custody: route.custody,
        platformFeeToken: route.platformFeeToken,
        integratorFeeToken: route.integratorFeeToken,
        platformWallet: route.platformWallet,
        integratorWallet: route.integratorWallet,
      },
    }),
  };
}

/**
 * Moves the route's net amount one hop forward; signed (and paid) by the route's keeper. The last
 * step of a native-mint route unwraps: the recipient's wallet receives the net amount as SOL.
 */
export function getExecuteStepInstruction(
  input: { keeper: TransactionSigner; index: number; accounts: ExecuteStepAccounts },
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Instruction {
  const a = input.accounts;
  const settlement = a.settlement
    ? [
        writable(a.settlement.custody),
        writable(a.settlement.platformFeeToken),
        writable(a.settlement.integratorFeeToken),
        writable(a.settlement.platformWallet),
        writable(a.settlement.integratorWallet),
      ]
    : [];
  return instruction(
    programAddress,
    [
      signerMeta(input.keeper, false),
      writable(a.route),
      writable(a.step),
      writable(a.from),
      writable(a.to),
      readonly(TOKEN_PROGRAM_ADDRESS),
      ...settlement,
    ],
    bytes(RouterInstruction.ExecuteStep, input.index),
  );
}

/** The keeper gives up on a route, which makes it rescuable at once. */
export function getMarkFailedInstruction(
  input: { keeper: TransactionSigner; route: Address },
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Instruction {
  return instruction(
    programAddress,
    [signerMeta(input.keeper, false), writable(input.route)],
    bytes(RouterInstruction.MarkFailed),
  );
}
