import {
  type AccountMeta,
  AccountRole,
  type AccountSignerMeta,
  type Address,
  address,
  getAddressEncoder,
  getBooleanEncoder,
  getI64Encoder,
  getStructEncoder,
  getU8Encoder,
  getU16Encoder,
  getU32Encoder,
  getU64Encoder,
  type Instruction,
  type ProgramDerivedAddress,
  padRightEncoder,
  type TransactionSigner,
} from '@solana/kit';
import { SYSTEM_PROGRAM_ADDRESS } from '@solana-program/system';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { PreparedRouteTerms } from '../../domain/route-terms.ts';
import { type Route, routeHolder, ZERO_ADDRESS } from './accounts.ts';
import { ROUTER_PROGRAM_ADDRESS } from './program.ts';

/*
 * Instruction builders of the router program. Accounts that must sign take a `TransactionSigner`
 * (use kit's `createNoopSigner` for a wallet that signs elsewhere, such as the user's); the
 * instruction then carries the signer so `signTransactionMessageWithSigners` and
 * `partiallySignTransactionMessageWithSigners` find it. Account order is the program's.
 */

export const BPF_LOADER_UPGRADEABLE_ADDRESS = address('BPFLoaderUpgradeab1e11111111111111111111111');

export const RouterInstruction = {
  InitConfig: 0,
  UpdateConfig: 1,
  InitOrchestrator: 2,
  CreateRoute: 3,
  AddHops: 4,
  InitSteps: 5,
  ScreenRoute: 6,
  ExecuteStep: 7,
  MarkFailed: 8,
  Rescue: 9,
  Reclaim: 10,
  CloseOrchestrator: 11,
  WithdrawLamports: 12,
  WithdrawTokens: 13,
} as const;

const signerMeta = (signer: TransactionSigner, writable = true): AccountSignerMeta => ({
  address: signer.address,
  role: writable ? AccountRole.WRITABLE_SIGNER : AccountRole.READONLY_SIGNER,
  signer,
});
const writable = (a: Address): AccountMeta => ({ address: a, role: AccountRole.WRITABLE });
const readonly = (a: Address): AccountMeta => ({ address: a, role: AccountRole.READONLY });

function instruction(
  programAddress: Address,
  accounts: (AccountMeta | AccountSignerMeta)[],
  data: Uint8Array,
): Instruction {
  return { programAddress, accounts, data };
}

const bytes = (...values: number[]) => new Uint8Array(values);

const u8 = getU8Encoder();
const addressEncoder = getAddressEncoder();

const initConfigEncoder = getStructEncoder([
  ['tag', u8],
  ['bump', padRightEncoder(u8, 6)],
  ['screeningDepositLamports', getU64Encoder()],
  ['screeningAuthority', addressEncoder],
  ['platformWallet', addressEncoder],
]);

/** Creates the protocol config; signed by the program's upgrade authority. */
export function getInitConfigInstruction(
  input: {
    admin: TransactionSigner;
    config: ProgramDerivedAddress;
    programData: Address;
    screeningAuthority: Address;
    platformWallet: Address;
    screeningDepositLamports: bigint;
  },
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Instruction {
  const [config, bump] = input.config;
  return instruction(
    programAddress,
    [
      signerMeta(input.admin),
      writable(config),
      readonly(programAddress),
      readonly(input.programData),
      readonly(SYSTEM_PROGRAM_ADDRESS),
    ],
    new Uint8Array(
      initConfigEncoder.encode({
        tag: RouterInstruction.InitConfig,
        bump,
        screeningDepositLamports: input.screeningDepositLamports,
        screeningAuthority: input.screeningAuthority,
        platformWallet: input.platformWallet,
      }),
    ),
  );
}

const updateConfigEncoder = getStructEncoder([
  ['tag', padRightEncoder(u8, 7)],
  ['screeningDepositLamports', getU64Encoder()],
  ['admin', addressEncoder],
  ['screeningAuthority', addressEncoder],
  ['platformWallet', addressEncoder],
]);

/** Replaces the protocol config's keys and deposit; signed by the current admin. */
export function getUpdateConfigInstruction(
  input: {
    admin: TransactionSigner;
    config: Address;
    newAdmin: Address;
    screeningAuthority: Address;
    platformWallet: Address;
    screeningDepositLamports: bigint;
  },
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Instruction {
  return instruction(
    programAddress,
    [signerMeta(input.admin, false), writable(input.config)],
    new Uint8Array(
      updateConfigEncoder.encode({
        tag: RouterInstruction.UpdateConfig,
        screeningDepositLamports: input.screeningDepositLamports,
        admin: input.newAdmin,
        screeningAuthority: input.screeningAuthority,
        platformWallet: input.platformWallet,
      }),
    ),
  );
}

/** Creates the source wallet's orchestrator config (succeeds without change when it exists). */
export function getInitOrchestratorInstruction(
  input: { source: TransactionSigner; orchestrator: ProgramDerivedAddress },
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Instruction {
  const [orchestrator, bump] = input.orchestrator;
  return instruction(
    programAddress,
    [signerMeta(input.source), writable(orchestrator), readonly(SYSTEM_PROGRAM_ADDRESS)],
    bytes(RouterInstruction.InitOrchestrator, bump),
  );
}

/**
 * The terms of a route as its CreateRoute carries them (the mint and the fee accounts travel as
 * accounts; the platform's flat fee goes to the config, which the program names itself).
 */
export type RouteTerms = Omit<
  PreparedRouteTerms,
  'mint' | 'platformWallet' | 'platformFeeToken' | 'integratorFeeToken'
> & {
  /** Unique per source wallet; part of the route's address. */
  routeId: bigint;
};

const createRouteEncoder = getStructEncoder([
  ['tag', u8],
  ['routeBump', u8],
  ['custodyBump', u8],
  ['hopCount', u8],
  ['screeningRequired', padRightEncoder(getBooleanEncoder(), 1)],
  ['percentFeeBps', getU16Encoder()],
  ['integratorShareBps', padRightEncoder(getU16Encoder(), 2)],
  ['intervalSecs', getU32Encoder()],
  ['routeId', getU64Encoder()],
  ['amount', getU64Encoder()],
  ['flatFeePerHopLamports', getU64Encoder()],
  ['firstReleaseAt', getI64Encoder()],
  ['deadlineAt', getI64Encoder()],
  ['keeper', addressEncoder],
  ['recipient', addressEncoder],
  ['recipientToken', addressEncoder],
  ['integratorWallet', addressEncoder],
  ['maxDepositLamports', getU64Encoder()],
]);

/**
 * Creates the route and its custody account, takes `amount` tokens from the source's token account
 * into custody, holds the flat fee (and screening deposit) in the route account, and creates the
 * first intermediate accounts at the given fresh addresses (each must sign). The platform's fees
 * will settle into the config account and `platformFeeToken`, which must be a token account the
 * config owns (its associated token account of the mint).
 */
export function getCreateRouteInstruction(
  input: {
    source: TransactionSigner;
    route: ProgramDerivedAddress;
    custody: ProgramDerivedAddress;
    sourceToken: Address;
    mint: Address;
    config: Address;
    platformFeeToken: Address;
    integratorFeeToken: Address;
    hops: readonly TransactionSigner[];
    terms: RouteTerms;
  },
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Instruction {
  const [route, routeBump] = input.route;
  const [custody, custodyBump] = input.custody;
  return instruction(
    programAddress,
    [
      signerMeta(input.source),
      writable(route),
      writable(custody),
      writable(input.sourceToken),
      readonly(input.mint),
      readonly(input.config),
      readonly(input.platformFeeToken),
      readonly(input.integratorFeeToken),
      readonly(SYSTEM_PROGRAM_ADDRESS),
      readonly(TOKEN_PROGRAM_ADDRESS),
      ...input.hops.map((hop) => signerMeta(hop)),
    ],
    new Uint8Array(
      createRouteEncoder.encode({
        tag: RouterInstruction.CreateRoute,
        routeBump,
        custodyBump,
        ...input.terms,
        recipientToken: input.terms.recipientToken ?? ZERO_ADDRESS,
      }),
    ),
  );
}

/**
 * Creates further intermediate accounts of a route still being deployed. `existingHopCount` is
 * the route's `hopsRegistered` as read on chain: a stale or replayed transaction fails.
 */
export function getAddHopsInstruction(
  input: {
    source: TransactionSigner;
    route: Address;
    mint: Address;
    existingHopCount: number;
    hops: readonly TransactionSigner[];
  },
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Instruction {
  return instruction(
    programAddress,
    [
      signerMeta(input.source),
      writable(input.route),
      readonly(input.mint),
      readonly(SYSTEM_PROGRAM_ADDRESS),
      readonly(TOKEN_PROGRAM_ADDRESS),
      ...input.hops.map((hop) => signerMeta(hop)),
    ],
    bytes(RouterInstruction.AddHops, input.existingHopCount),
  );
}

/**
 * Creates step states (idempotent: existing ones are skipped). Needs every intermediate account
 * and the orchestrator config; creating the last step also checks the recipient's token account,
 * so create that first (e.g. CreateAssociatedTokenAccountIdempotent in the same transaction). On a
 * native-mint route `recipientHolder` is the recipient's wallet, which needs nothing.
 */
export function getInitStepsInstruction(
  input: {
    source: TransactionSigner;
    route: Address;
    orchestrator: Address;
    /** The route's last holder: the recipient's token account, or its wallet on a native-mint route. */
    recipientHolder: Address;
    steps: readonly { index: number; pda: ProgramDerivedAddress }[];
  },
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Instruction {
  return instruction(
    programAddress,
    [
      signerMeta(input.source),
      writable(input.route),
      writable(input.orchestrator),
      readonly(input.recipientHolder),
      readonly(SYSTEM_PROGRAM_ADDRESS),
      ...input.steps.map((s) => writable(s.pda[0])),
    ],
    bytes(RouterInstruction.InitSteps, ...input.steps.flatMap((s) => [s.index, s.pda[1]])),
  );
}

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

export interface RecoverInput {
  source: TransactionSigner;
  route: Address;
  orchestrator: Address;
  /** The source's token account of the route's mint; receives any tokens left in closed accounts. */
  sourceToken: Address;
  /** Step states and token accounts (custody, intermediates) of the route to close, any subset. */
  close: readonly Address[];
  /** Also close the orchestrator config when no route of the source stays open. */
  closeOrchestrator?: boolean;
}

function recoverInstruction(tag: number, input: RecoverInput, programAddress: Address): Instruction {
  return instruction(
    programAddress,
    [
      signerMeta(input.source),
      writable(input.route),
      writable(input.orchestrator),
      writable(input.sourceToken),
      readonly(TOKEN_PROGRAM_ADDRESS),
      ...input.close.map(writable),
    ],
    bytes(tag, input.closeOrchestrator ? 1 : 0),
  );
}

/**
 * Rescue of a failed, flagged, undeployed or overdue route by its source: returns every token
 * and the held flat fee and deposit, and closes the given accounts (the route with the last one).
 */
export function getRescueInstruction(input: RecoverInput, programAddress: Address = ROUTER_PROGRAM_ADDRESS) {
  return recoverInstruction(RouterInstruction.Rescue, input, programAddress);
}

/** Rent reclaim after settlement (or after a rescue): closes the given accounts to the source. */
export function getReclaimInstruction(input: RecoverInput, programAddress: Address = ROUTER_PROGRAM_ADDRESS) {
  return recoverInstruction(RouterInstruction.Reclaim, input, programAddress);
}

/** Closes the source's orchestrator config when none of its routes is open. */
export function getCloseOrchestratorInstruction(
  input: { source: TransactionSigner; orchestrator: Address },
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Instruction {
  return instruction(
    programAddress,
    [signerMeta(input.source), writable(input.orchestrator)],
    bytes(RouterInstruction.CloseOrchestrator),
  );
}

const withdrawEncoder = getStructEncoder([
  ['tag', padRightEncoder(u8, 7)],
  ['amount', getU64Encoder()],
]);

/**
 * Moves `amount` lamports of the platform's earnings out of the config account (which keeps its
 * rent-exempt minimum); signed by the config's platform wallet.
 */
export function getWithdrawLamportsInstruction(
  input: { platformWallet: TransactionSigner; config: Address; destination: Address; amount: bigint },
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Instruction {
  return instruction(
    programAddress,
    [signerMeta(input.platformWallet, false), writable(input.config), writable(input.destination)],
    new Uint8Array(withdrawEncoder.encode({ tag: RouterInstruction.WithdrawLamports, amount: input.amount })),
  );
}

/**
 * Moves `amount` tokens of the platform's earnings out of a token account the config owns (`vault`,
 * its associated token account of the mint) into `destination`; signed by the platform wallet.
 */
export function getWithdrawTokensInstruction(
  input: {
    platformWallet: TransactionSigner;
    config: Address;
    vault: Address;
    destination: Address;
    amount: bigint;
  },
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Instruction {
  return instruction(
    programAddress,
    [
      signerMeta(input.platformWallet, false),
      readonly(input.config),
      writable(input.vault),
      writable(input.destination),
      readonly(TOKEN_PROGRAM_ADDRESS),
    ],
    new Uint8Array(withdrawEncoder.encode({ tag: RouterInstruction.WithdrawTokens, amount: input.amount })),
  );
}
