import type { Address, Instruction, TransactionSigner } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import {
  getCloseAccountInstruction,
  getCreateAssociatedTokenIdempotentInstruction,
  getSyncNativeInstruction,
} from '@solana-program/token';
import { TRANSACTION_SIZE_LIMIT, transactionSize } from '../transactions.ts';
import { isNativeMint, NATIVE_MINT_ADDRESS, type Route } from './accounts.ts';
import {
  getAddHopsInstruction,
  getCloseOrchestratorInstruction,
  getCreateRouteInstruction,
  getInitOrchestratorInstruction,
  getInitStepsInstruction,
  getReclaimInstruction,
  getRescueInstruction,
  type RouteTerms,
} from './instructions.ts';
import type { RouteAddresses } from './pda.ts';
import { ROUTER_PROGRAM_ADDRESS } from './program.ts';

/*
 * The transaction groups of a route's life, as lists of instructions per transaction (the caller
 * adds fee payer, blockhash and signatures). Every transaction fits the 1,232-byte limit without
 * lookup tables, with both compute-budget instructions: the route's creation, which may also
 * create the platform's fee account and wrap SOL, is measured and holds as many intermediate
 * accounts as fit; the other groups hold the counts below, which fit in every case
 * (src/chain/router/bundle.test.ts checks every combination, bench/program.ts reports the sizes).
 */

/** Intermediate accounts the CreateRoute transaction creates at most (each adds a signature). */
export const MAX_HOPS_IN_CREATE_ROUTE_TX = 5;
/**
 * The same on a native-mint route, whose CreateRoute transaction also wraps the source's SOL (and
 * closes the wrapped-SOL account it opened): one intermediate account fewer leaves room for that.
 */
export const MAX_HOPS_IN_NATIVE_CREATE_ROUTE_TX = 4;

/** Intermediate accounts the CreateRoute transaction of a route on this mint creates when nothing else shares it. */
export function hopsInCreateRoute(native: boolean): number {
  return native ? MAX_HOPS_IN_NATIVE_CREATE_ROUTE_TX : MAX_HOPS_IN_CREATE_ROUTE_TX;
}
/** Intermediate accounts created by one AddHops transaction. */
export const MAX_HOPS_IN_ADD_HOPS_TX = 8;
/** Step states created by one session-init transaction. */
export const MAX_STEPS_IN_INIT_STEPS_TX = 10;
/** Accounts closed by one rescue or reclaim transaction. */
export const MAX_CLOSES_IN_RECOVERY_TX = 12;

const chunk = <T>(items: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

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
  const { terms, addresses, onChain } = input;
  const native = isNativeMint(input.mint);
  if (native !== (terms.recipientToken === null)) {
    throw new Error(
      native
        ? 'a native-mint route names no recipient token account (the recipient receives SOL)'
        : 'the route needs the recipient token account',
    );
  }
  const recipientHolder = terms.recipientToken ?? terms.recipient;
  const intermediates = terms.hopCount - 1;
  const route = onChain.route;
  const existingHopCount = route?.hopsRegistered ?? 0;
  const deploying = route === null || route.status === 'deploying';
  const missing = deploying ? intermediates - existingHopCount : 0;
  if (input.hopSigners.length < missing) {
    throw new Error(`need ${missing} fresh hop signers, got ${input.hopSigners.length}`);
  }
  const signers = input.hopSigners.slice(0, missing);
  const createFeeToken = input.createPlatformFeeToken
    ? [
        getCreateAssociatedTokenIdempotentInstruction({
          payer: input.source,
          ata: input.platformFeeToken,
          owner: input.config,
          mint: input.mint,
        }),
      ]
    : [];
  const platformFeeTokenIn = !input.createPlatformFeeToken
    ? null
    : !onChain.keeperFunded
      ? 'keeperFunding'
      : route === null
        ? 'routeInit'
        : null;

  const routeInit: Instruction[][] = [];
  let registered = existingHopCount;
  let pending = signers;
  if (route === null) {
    const before = [
      ...(platformFeeTokenIn === 'routeInit' ? createFeeToken : []),
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
    const createRoute = (hops: readonly TransactionSigner[]) => [
      ...before,
      getCreateRouteInstruction(
        {
          source: input.source,
          route: addresses.route,
          custody: addresses.custody,
          sourceToken: input.sourceToken,
          mint: input.mint,
          config: input.config,
          platformFeeToken: input.platformFeeToken,
          integratorFeeToken: input.integratorFeeToken,
          hops,
          terms,
        },
        programAddress,
      ),
      ...after,
    ];
    // As many intermediate accounts as fit (one always does): measuring costs a compilation each.
    let count = Math.min(MAX_HOPS_IN_CREATE_ROUTE_TX, pending.length);
    while (
      count > 1 &&
      transactionSize({
        feePayer: input.source.address,
        instructions: createRoute(pending.slice(0, count)),
        version: 0,
      }) > TRANSACTION_SIZE_LIMIT
    ) {
      count -= 1;
    }
    const first = pending.slice(0, count);
    routeInit.push(createRoute(first));
    registered += first.length;
    pending = pending.slice(first.length);
  }
  const addHops = (hops: readonly TransactionSigner[]) => [
    getAddHopsInstruction(
      {
        source: input.source,
        route: addresses.route[0],
        mint: input.mint,
        existingHopCount: registered,
        hops,
      },
      programAddress,
    ),
  ];
  for (const hops of chunk(pending, MAX_HOPS_IN_ADD_HOPS_TX)) {
    routeInit.push(addHops(hops));
    registered += hops.length;
  }

  const stepsLive = route?.stepsLive ?? 0;
  const allSteps = Array.from({ length: terms.hopCount }, (_, index) => index);
  const completedStepIndices = allSteps.filter((i) => (stepsLive & (1 << i)) !== 0);
  const missingSteps = deploying ? allSteps.filter((i) => (stepsLive & (1 << i)) === 0) : [];
  const session = (indices: readonly number[], first: boolean) => [
    ...(first && !native && (input.createRecipientTokenAccount ?? true)
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
  ];
  const sessionInit = chunk(missingSteps, MAX_STEPS_IN_INIT_STEPS_TX).map((indices, n) =>
    session(indices, n === 0),
  );

  return {
    keeperFunding: onChain.keeperFunded
      ? null
      : [
          ...(platformFeeTokenIn === 'keeperFunding' ? createFeeToken : []),
          getTransferSolInstruction({
            source: input.source,
            destination: input.keeper,
            amount: input.keeperFundingLamports,
          }),
        ],
    routeInit,
    orchestratorInit: onChain.orchestratorExists
      ? null
      : [
          getInitOrchestratorInstruction(
            { source: input.source, orchestrator: addresses.orchestrator },
            programAddress,
          ),
        ],
    sessionInit,
    platformFeeTokenIn,
    resume: {
      routeAlreadyDeployed: route !== null && existingHopCount === intermediates,
      existingHopCount,
      totalHops: terms.hopCount,
      completedStepIndices,
      totalSteps: terms.hopCount,
    },
  };
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

/** Every live account of a route the program can close: token accounts first (they hold tokens), then steps. */
export function closableRouteAccounts(route: Route, steps: readonly Address[]): Address[] {
  const tokens = [route.custody, ...route.hops].filter((_, bit) => (route.tokensLive & (1 << bit)) !== 0);
  const liveSteps = steps.filter((_, index) => (route.stepsLive & (1 << index)) !== 0);
  return [...tokens, ...liveSteps];
}

export interface RecoveryInput {
  kind: 'rescue' | 'reclaim';
  source: TransactionSigner;
  routeAddress: Address;
  /** The route as read on chain; null when it is already closed. */
  route: Route | null;
  orchestrator: Address;
  /** Step state addresses of the route, in order. */
  steps: readonly Address[];
  sourceToken: Address;
  /** Create the source's associated token account first (when it was closed since deployment). */
  createSourceTokenAccount?: { mint: Address };
  /** Close the orchestrator config too (when this is the source's last open route). */
  closeOrchestrator: boolean;
  /** The keeper's whole balance goes back to the source in the last transaction. */
  keeperSweep?: { keeper: TransactionSigner; lamports: bigint };
  programAddress?: Address;
}

/**
 * The rescue or reclaim transactions of a route: closes every live account (returning tokens to
 * the source's token account), then the route and, if asked, the orchestrator config, and sweeps
 * the keeper. Each inner list is one transaction.
 */
export function planRecovery(input: RecoveryInput): Instruction[][] {
  const programAddress = input.programAddress ?? ROUTER_PROGRAM_ADDRESS;
  const build = input.kind === 'rescue' ? getRescueInstruction : getReclaimInstruction;
  const groups: Instruction[][] = [];
  if (input.route) {
    const closes = closableRouteAccounts(input.route, input.steps);
    const chunks = closes.length === 0 ? [[]] : chunk(closes, MAX_CLOSES_IN_RECOVERY_TX);
    chunks.forEach((close, i) => {
      const last = i === chunks.length - 1;
      groups.push([
        build(
          {
            source: input.source,
            route: input.routeAddress,
            orchestrator: input.orchestrator,
            sourceToken: input.sourceToken,
            close,
            closeOrchestrator: last && input.closeOrchestrator,
          },
          programAddress,
        ),
      ]);
    });
  } else if (input.closeOrchestrator) {
    groups.push([
      getCloseOrchestratorInstruction(
        { source: input.source, orchestrator: input.orchestrator },
        programAddress,
      ),
    ]);
  }
  if (input.createSourceTokenAccount && groups[0]) {
    groups[0].unshift(
      getCreateAssociatedTokenIdempotentInstruction({
        payer: input.source,
        ata: input.sourceToken,
        owner: input.source.address,
        mint: input.createSourceTokenAccount.mint,
      }),
    );
  }
  if (input.keeperSweep && input.keeperSweep.lamports > 0n) {
    const sweep = getTransferSolInstruction({
      source: input.keeperSweep.keeper,
      destination: input.source.address,
      amount: input.keeperSweep.lamports,
    });
    // Before the router instruction: return data is the last instruction's, and the service reads
    // the recovered amounts from it.
    const last = groups.at(-1);
    if (last) last.splice(last.length - 1, 0, sweep);
    else groups.push([sweep]);
  }
  return groups;
}
