// The deployment bundle of a route: the keeper's funding, the route with its intermediate accounts,
// the orchestrator config and the step states, each group as its transactions' instructions.
import type { Address, Instruction, TransactionSigner } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import {
  getCloseAccountInstruction,
  getCreateAssociatedTokenIdempotentInstruction,
  getSyncNativeInstruction,
} from '@solana-program/token';
import { TRANSACTION_SIZE_LIMIT, transactionSize } from '../../transactions.ts';
import { isNativeMint, NATIVE_MINT_ADDRESS, type Route } from '../accounts.ts';
import {
  getAddHopsInstruction,
  getCreateRouteInstruction,
  getInitOrchestratorInstruction,
  getInitStepsInstruction,
  type RouteTerms,
} from '../instructions.ts';
import type { RouteAddresses } from '../pda.ts';
import { ROUTER_PROGRAM_ADDRESS } from '../program.ts';
import {
  chunk,
  MAX_HOPS_IN_ADD_HOPS_TX,
  MAX_HOPS_IN_CREATE_ROUTE_TX,
  MAX_STEPS_IN_INIT_STEPS_TX,
} from './limits.ts';

export interface DeploymentInput {
  /** The user's wallet (a noop signer when it signs elsewhere); pays for everything. */
  source: TransactionSigner;
  keeper: Address;
  keeperFundingLamports: bigint;
  terms: RouteTerms;
  mint: Address;
  sourceToken: Address;
  config: Address;
  platformFeeToken: Address;
  integratorFeeToken: Address;
  addresses: RouteAddresses;
  /** Fresh signers for the intermediate accounts not yet on chain, at least that many. */
  hopSigners: readonly TransactionSigner[];
  /** What the chain already holds, for resuming a partial deployment. */
  onChain: { keeperFunded: boolean; route: Route | null; orchestratorExists: boolean };
  /**
   * Create the recipient's associated token account in the first session transaction (default
   * true; never on a native-mint route, whose recipient receives SOL in its wallet).
   */
  createRecipientTokenAccount?: boolean;
  /**
   * The platform fee token account (the config's associated token account of the mint) is missing:
   * the bundle creates it, with the keeper's funding when that is sent, else in the route's
   * creation (the route needs it).
   */
  createPlatformFeeToken?: boolean;
  /**
   * A native-mint route's creation first wraps `amount` lamports in the source's token account;
   * `closeAfter` when the bundle opens that account, which closes again once the route took them.
   */
  wrapSol?: { amount: bigint; closeAfter: boolean };
  programAddress?: Address;
}

export interface DeploymentPlan {
  keeperFunding: Instruction[] | null;
  /** CreateRoute, then AddHops transactions; empty once every intermediate account exists. */
  routeInit: Instruction[][];
  /** Sent as a legacy transaction; null when the orchestrator config exists. */
  orchestratorInit: Instruction[] | null;
  /** Step states still missing (and the recipient's token account first, except on a native-mint route). */
  sessionInit: Instruction[][];
  /** Which transaction creates the platform fee token account, if the bundle does. */
  platformFeeTokenIn: 'keeperFunding' | 'routeInit' | null;
  resume: {
    routeAlreadyDeployed: boolean;
    existingHopCount: number;
    totalHops: number;
    completedStepIndices: number[];
    totalSteps: number;
  };
}

/** Splits a route's deployment into the prepared bundle's groups, skipping what exists on chain. */
export function planDeployment(input: DeploymentInput): DeploymentPlan {
  const programAddress = input.programAddress ?? ROUTER_PROGRAM_ADDRESS;
  const { terms, onChain } = input;
  const native = isNativeMint(input.mint);
  if (native !== (terms.recipientToken === null)) {
    throw new Error(
      native
        ? 'a native-mint route names no recipient token account (the recipient receives SOL)'
        : 'the route needs the recipient token account',
    );
  }
  const route = onChain.route;
  const existingHopCount = route?.hopsRegistered ?? 0;
  const deploying = route === null || route.status === 'deploying';
  const signers = freshHopSigners(input, deploying);
  const platformFeeTokenIn = platformFeeTokenPlacement(input);
  const steps = stepProgress(route, terms.hopCount, deploying);
  return {
    keeperFunding: onChain.keeperFunded ? null : keeperFunding(input, platformFeeTokenIn === 'keeperFunding'),
    routeInit: routeInit(input, signers, platformFeeTokenIn === 'routeInit', programAddress),
    orchestratorInit: onChain.orchestratorExists
      ? null
      : [
          getInitOrchestratorInstruction(
            { source: input.source, orchestrator: input.addresses.orchestrator },
            programAddress,
          ),
        ],
    sessionInit: sessionInit(input, steps.missing, native, programAddress),
    platformFeeTokenIn,
    resume: {
      routeAlreadyDeployed: route !== null && existingHopCount === terms.hopCount - 1,
      existingHopCount,
      totalHops: terms.hopCount,
      completedStepIndices: steps.completed,
      totalSteps: terms.hopCount,
    },
  };
}

/** The signers of the intermediate accounts still to create: none once the route is past deploying. */
function freshHopSigners(input: DeploymentInput, deploying: boolean): readonly TransactionSigner[] {
  const intermediates = input.terms.hopCount - 1;
  const missing = deploying ? intermediates - (input.onChain.route?.hopsRegistered ?? 0) : 0;
  if (input.hopSigners.length < missing) {
    throw new Error(`need ${missing} fresh hop signers, got ${input.hopSigners.length}`);
  }
  return input.hopSigners.slice(0, missing);
}

/**
 * Which transaction creates the missing platform fee account: the keeper's funding when that is
 * sent, else the route's creation when the route is not on chain yet.
 */
function platformFeeTokenPlacement(input: DeploymentInput): DeploymentPlan['platformFeeTokenIn'] {
  if (!input.createPlatformFeeToken) return null;
  if (!input.onChain.keeperFunded) return 'keeperFunding';
  return input.onChain.route === null ? 'routeInit' : null;
}

function createPlatformFeeToken(input: DeploymentInput): Instruction {
  return getCreateAssociatedTokenIdempotentInstruction({
    payer: input.source,
    ata: input.platformFeeToken,
    owner: input.config,
    mint: input.mint,
  });
}

function keeperFunding(input: DeploymentInput, withPlatformFeeToken: boolean): Instruction[] {
  return [
    ...(withPlatformFeeToken ? [createPlatformFeeToken(input)] : []),
    getTransferSolInstruction({
      source: input.source,
      destination: input.keeper,
      amount: input.keeperFundingLamports,
    }),
  ];
}

/**
 * The CreateRoute transaction (when the route is not on chain yet) with as many of `signers` as
 * fit, then AddHops transactions for the rest.
 */
function routeInit(
  input: DeploymentInput,
  signers: readonly TransactionSigner[],
  withPlatformFeeToken: boolean,
  programAddress: Address,
): Instruction[][] {
  const groups: Instruction[][] = [];
  let registered = input.onChain.route?.hopsRegistered ?? 0;
  let pending = signers;
  if (input.onChain.route === null) {
    const createRoute = createRouteTransaction(input, withPlatformFeeToken, programAddress);
    const first = pending.slice(0, hopsThatFit(input.source.address, createRoute, pending));
    groups.push(createRoute(first));
    registered += first.length;
    pending = pending.slice(first.length);
  }
  for (const hops of chunk(pending, MAX_HOPS_IN_ADD_HOPS_TX)) {
    groups.push([
      getAddHopsInstruction(
        {
          source: input.source,
          route: input.addresses.route[0],
          mint: input.mint,
          existingHopCount: registered,
          hops,
        },
        programAddress,
      ),
    ]);
    registered += hops.length;
  }
  return groups;
}

/**
 * The route's creation with the given intermediate accounts: after the platform fee account's
 * creation and the wrapping of SOL when asked, and before the closing of the wrapped-SOL account.
 */
function createRouteTransaction(
  input: DeploymentInput,
  withPlatformFeeToken: boolean,
  programAddress: Address,
): (hops: readonly TransactionSigner[]) => Instruction[] {
  const before = [
    ...(withPlatformFeeToken ? [createPlatformFeeToken(input)] : []),
    ...(input.wrapSol ? wrapSol(input.source, input.sourceToken, input.wrapSol.amount) : []),
  ];
  const after = input.wrapSol?.closeAfter
    ? [
        getCloseAccountInstruction({
          account: input.sourceToken,
          destination: input.source.address,
          owner: input.source,
        }),
      ]
    : [];
  return (hops) => [
    ...before,
    getCreateRouteInstruction(
      {
        source: input.source,
        route: input.addresses.route,
        custody: input.addresses.custody,
        sourceToken: input.sourceToken,
        mint: input.mint,
        config: input.config,
        platformFeeToken: input.platformFeeToken,
        integratorFeeToken: input.integratorFeeToken,
        hops,
        terms: input.terms,
      },
      programAddress,
    ),
    ...after,
  ];
}

/** As many intermediate accounts as fit (one always does): measuring costs a compilation each. */
function hopsThatFit(
  feePayer: Address,
  createRoute: (hops: readonly TransactionSigner[]) => Instruction[],
  pending: readonly TransactionSigner[],
): number {
  let count = Math.min(MAX_HOPS_IN_CREATE_ROUTE_TX, pending.length);
  while (
    count > 1 &&
    transactionSize({ feePayer, instructions: createRoute(pending.slice(0, count)), version: 0 }) >
      TRANSACTION_SIZE_LIMIT
  ) {
    count -= 1;
  }
  return count;
}

/** The route's step indices whose state exists, and those still to create (none past deploying). */
function stepProgress(
  route: Route | null,
  hopCount: number,
  deploying: boolean,
): { completed: number[]; missing: number[] } {
  const stepsLive = route?.stepsLive ?? 0;
  const allSteps = Array.from({ length: hopCount }, (_, index) => index);
  return {
    completed: allSteps.filter((i) => (stepsLive & (1 << i)) !== 0),
    missing: deploying ? allSteps.filter((i) => (stepsLive & (1 << i)) === 0) : [],
  };
}

/**
 * InitSteps transactions for the missing step states; the first also creates the recipient's
 * token account, unless told not to and never on a native-mint route.
 */
function sessionInit(
  input: DeploymentInput,
  missingSteps: readonly number[],
  native: boolean,
  programAddress: Address,
): Instruction[][] {
  const { terms, addresses } = input;
  const recipientHolder = terms.recipientToken ?? terms.recipient;
  const createRecipientToken = !native && (input.createRecipientTokenAccount ?? true);
  return chunk(missingSteps, MAX_STEPS_IN_INIT_STEPS_TX).map((indices, n) => [
    ...(n === 0 && createRecipientToken
      ? [
          getCreateAssociatedTokenIdempotentInstruction({
            payer: input.source,
            ata: recipientHolder,
            owner: terms.recipient,
            mint: input.mint,
          }),
        ]
      : []),
    getInitStepsInstruction(
      {
        source: input.source,
        route: addresses.route[0],
        orchestrator: addresses.orchestrator[0],
        recipientHolder,
        steps: indices.map((index) => ({ index, pda: addresses.steps[index]! })),
      },
      programAddress,
    ),
  ]);
}

/** Moves `amount` lamports into the source's wrapped-SOL account (creating it if needed). */
function wrapSol(source: TransactionSigner, account: Address, amount: bigint): Instruction[] {
  return [
    getCreateAssociatedTokenIdempotentInstruction({
      payer: source,
      ata: account,
      owner: source.address,
      mint: NATIVE_MINT_ADDRESS,
    }),
    getTransferSolInstruction({ source, destination: account, amount }),
    getSyncNativeInstruction({ account }),
  ];
}
