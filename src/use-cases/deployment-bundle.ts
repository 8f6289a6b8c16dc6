import {
  type Base64EncodedWireTransaction,
  createNoopSigner,
  generateKeyPairSigner,
  type Instruction,
} from '@solana/kit';
import { getTokenDecoder } from '@solana-program/token';
import { isNativeMint, type Route, TOKEN_ACCOUNT_SIZE } from '../chain/router/accounts.ts';
import { type DeploymentPlan, planDeployment } from '../chain/router/bundle.ts';
import { COMPUTE_UNIT_LIMITS } from '../chain/router/footprint.ts';
import type { RouteTerms } from '../chain/router/instructions.ts';
import type { RouteSnapshot } from '../chain/router/recovery.ts';
import type { BlockhashLifetime, CallOptions } from '../chain/types.ts';
import { routeSchedule } from '../domain/route.ts';
import type { PreparedRouteTerms } from '../domain/route-terms.ts';
import type { RouteRecord, Transfer } from '../domain/transfer.ts';
import { assertAffordable } from './affordability.ts';
import { assertFirstSimulates, type BuiltTransaction, buildTransaction } from './bundle-transactions.ts';
import {
  assignKeeper,
  type DeploymentBundleDeps,
  type DeploymentReads,
  newKeeper,
  readDeployment,
} from './deployment-reads.ts';
import { readRoute } from './route-reads.ts';

/*
 * The bundle a source signs to deploy its transfer's route: what the chain holds now, the
 * transaction groups still missing, each built, sized and priced, and the checks that the source
 * can pay for them and the first would land.
 */
/** The contract's "Prepared transaction bundle". */
export interface PreparedBundle {
  keeperFundingTx: Base64EncodedWireTransaction | null;
  routeInitTxs: { base64: Base64EncodedWireTransaction }[];
  orchestratorInitTx: Base64EncodedWireTransaction | null;
  sessionInitTxs: Base64EncodedWireTransaction[];
  recentBlockhash: string;
  /** A block height: far below 2^53, so a JSON number holds it exactly. */
  lastValidBlockHeight: number;
  resume: {
    routeAlreadyDeployed: boolean;
    existingHopCount: number;
    totalHops: number;
    orchestratorAlreadyInitialized: boolean;
    completedStepIndices: number[];
    totalSteps: number;
    keeperAlreadyFunded: boolean;
    nothingToDo: boolean;
  };
}

const tokenDecoder = getTokenDecoder();

/** The transaction groups of a bundle as built, null or empty where nothing is missing. */
interface BuiltGroups {
  keeperFundingTx: BuiltTransaction | null;
  routeInitTxs: BuiltTransaction[];
  orchestratorInitTx: BuiltTransaction | null;
  sessionInitTxs: BuiltTransaction[];
}

/**
 * Builds the bundle the source signs to deploy a transfer's route, skipping what is already on
 * chain: keeper funding, route creation (the fresh intermediate accounts sign here), the source's
 * orchestrator config, and the step states. Gives the transfer its keeper first (stored, sealed,
 * before any bundle funding it exists). Refuses with MH_016 when the source cannot pay for it.
 * Answers, besides the bundle, the terms its route creation carries (null when the route exists
 * already): the caller records them before handing the bundle out, since only a route with those
 * terms is ever run.
 */
export async function prepareBundle(
  deps: DeploymentBundleDeps,
  transfer: Transfer,
  options: CallOptions = {},
): Promise<{ transfer: Transfer; bundle: PreparedBundle; terms: PreparedRouteTerms | null }> {
  const [reads, keeper] = await Promise.all([
    readDeployment(deps, transfer, options),
    transfer.route ? null : newKeeper(),
  ]);
  const assigned = keeper ? await assignKeeper(deps, transfer, keeper, reads) : transfer;
  const routed = assigned as Transfer & { route: RouteRecord };
  const snapshot = await readRoute(
    deps.chain,
    deps.platform.programAddress,
    routed,
    options,
    reads.addresses,
  );
  const terms = routeTerms(deps.platform, routed, reads);
  const plan = await planBundle(deps.platform, routed, { reads, snapshot, terms });
  const groups = await buildGroups(
    deps,
    routed,
    { plan, reads, onChainRoute: snapshot.route?.data ?? null },
    options,
  );
  const built = [
    groups.keeperFundingTx,
    ...groups.routeInitTxs,
    groups.orchestratorInitTx,
    ...groups.sessionInitTxs,
  ].flatMap((tx) => (tx ? [tx] : []));
  assertBundleAffordable(deps.platform, routed, { built, plan, reads, snapshot, groups });
  assertFirstSimulates(built);
  return {
    terms:
      snapshot.route === null
        ? {
            ...terms,
            mint: transfer.tokenMint,
            platformWallet: deps.platform.configAddress,
            platformFeeToken: reads.platformFeeToken,
            integratorFeeToken: reads.platformFeeToken,
          }
        : null,
    transfer: assigned,
    bundle: bundleOf(routed, { groups, plan, snapshot, lifetime: reads.lifetime, empty: built.length === 0 }),
  };
}

/** The terms a route creation carries: the quote's, on a schedule from the chain's clock now. */
function routeTerms(
  platform: DeploymentBundleDeps['platform'],
  transfer: Transfer & { route: RouteRecord },
  reads: DeploymentReads,
): RouteTerms {
  const schedule = routeSchedule({
    t0: reads.chainNow,
    arrivalSeconds: transfer.arrivalSeconds,
    hops: transfer.hops,
    graceSeconds: platform.routeGraceSeconds,
  });
  return {
    routeId: BigInt(transfer.id),
    hopCount: transfer.hops,
    amount: transfer.amountRaw,
    percentFeeBps: transfer.percentFeeBps,
    // Both fee shares settle into the platform's accounts (decisions, "Fee destinations"); the
    // integrator's share is credited from what the route paid when the transfer settles.
    integratorShareBps: 0,
    flatFeePerHopLamports: transfer.flatFeeLamportsPerHop,
    ...schedule,
    keeper: transfer.route.keeper,
    recipient: transfer.recipientWallet,
    recipientToken: isNativeMint(transfer.tokenMint) ? null : reads.recipientToken,
    integratorWallet: platform.configAddress,
    screeningRequired: platform.screeningRequired,
    maxDepositLamports: platform.screeningRequired ? reads.config.screeningDepositLamports : 0n,
  };
}

/** Intermediate hops whose accounts the chain does not have yet. */
const missingHops = (transfer: Transfer, onChainRoute: Route | null) =>
  onChainRoute === null ? transfer.hops - 1 : transfer.hops - 1 - onChainRoute.hopsRegistered;

/** Whether the route's deployment is over on chain (nothing but keeper funding is left to offer). */
const deploymentDone = (onChainRoute: Route | null) =>
  onChainRoute !== null && onChainRoute.status !== 'deploying';

/** The instructions of every group still missing on chain. */
async function planBundle(
  platform: DeploymentBundleDeps['platform'],
  transfer: Transfer & { route: RouteRecord },
  input: { reads: DeploymentReads; snapshot: RouteSnapshot; terms: RouteTerms },
): Promise<DeploymentPlan> {
  const { reads, snapshot } = input;
  const onChainRoute = snapshot.route?.data ?? null;
  const native = isNativeMint(transfer.tokenMint);
  return planDeployment({
    source: createNoopSigner(transfer.sourceOwner),
    keeper: transfer.route.keeper,
    keeperFundingLamports: transfer.route.keeperFundingLamports,
    terms: input.terms,
    mint: transfer.tokenMint,
    sourceToken: reads.sourceToken,
    config: platform.configAddress,
    platformFeeToken: reads.platformFeeToken,
    integratorFeeToken: reads.platformFeeToken,
    addresses: reads.addresses,
    hopSigners: await Promise.all(
      Array.from(
        { length: deploymentDone(onChainRoute) ? 0 : missingHops(transfer, onChainRoute) },
        generateKeyPairSigner,
      ),
    ),
    onChain: {
      keeperFunded: snapshot.keeper.lamports >= transfer.route.keeperFundingLamports,
      route: onChainRoute,
      orchestratorExists: snapshot.orchestrator !== null,
    },
    createPlatformFeeToken: !reads.feeTokenAccount?.exists,
    // A wrapped-SOL account the bundle opens is closed again once the route took its SOL.
    ...(native
      ? { wrapSol: { amount: transfer.amountRaw, closeAfter: !reads.sourceTokenAccount?.exists } }
      : {}),
    programAddress: platform.programAddress,
  });
}

/**
 * Each missing group built. Keeper funding is offered whenever the keeper lacks it, even under a
 * deployed route: it pays every hop, and the route is not taken over without it.
 */
async function buildGroups(
  deps: DeploymentBundleDeps,
  transfer: Transfer,
  input: { plan: DeploymentPlan; reads: DeploymentReads; onChainRoute: Route | null },
  options: CallOptions,
): Promise<BuiltGroups> {
  const { plan, reads, onChainRoute } = input;
  const done = deploymentDone(onChainRoute);
  const native = isNativeMint(transfer.tokenMint);
  const feeTokenUnits = (group: DeploymentPlan['platformFeeTokenIn']) =>
    plan.platformFeeTokenIn === group ? COMPUTE_UNIT_LIMITS.createTokenAccount : 0;
  const build = (name: string, instructions: Instruction[], version: 0 | 'legacy', fallbackUnits: number) =>
    buildTransaction(
      deps,
      {
        name,
        feePayer: transfer.sourceOwner,
        instructions,
        version,
        lifetime: reads.lifetime,
        microLamportsPerCu: reads.price,
      },
      fallbackUnits,
      options,
    );
  // What route creation cannot simulate before the keeper funding lands (the platform's fee
  // account it creates) is counted from measured figures: the route, wrapping SOL, and the fee
  // account when this transaction creates it.
  const routeInitUnits = (index: number) =>
    index === 0 && onChainRoute === null
      ? COMPUTE_UNIT_LIMITS.createRoute +
        (native ? COMPUTE_UNIT_LIMITS.wrapSol : 0) +
        feeTokenUnits('routeInit')
      : COMPUTE_UNIT_LIMITS.addHops;
  const [keeperFundingTx, routeInitTxs, orchestratorInitTx, sessionInitTxs] = await Promise.all([
    plan.keeperFunding
      ? build(
          'keeperFundingTx',
          plan.keeperFunding,
          0,
          COMPUTE_UNIT_LIMITS.keeperFunding + feeTokenUnits('keeperFunding'),
        )
      : null,
    Promise.all(
      (done ? [] : plan.routeInit).map((instructions, index) =>
        build(`routeInitTxs[${index}]`, instructions, 0, routeInitUnits(index)),
      ),
    ),
    !done && plan.orchestratorInit
      ? build('orchestratorInitTx', plan.orchestratorInit, 'legacy', COMPUTE_UNIT_LIMITS.orchestratorInit)
      : null,
    Promise.all(
      (done ? [] : plan.sessionInit).map((instructions, index) =>
        build(`sessionInitTxs[${index}]`, instructions, 0, COMPUTE_UNIT_LIMITS.sessionInit),
      ),
    ),
  ]);
  return { keeperFundingTx, routeInitTxs, orchestratorInitTx, sessionInitTxs };
}

/** MH_016 unless the source can pay for every account, fee and deposit of the bundle as built. */
function assertBundleAffordable(
  platform: DeploymentBundleDeps['platform'],
  transfer: Transfer & { route: RouteRecord },
  input: {
    built: BuiltTransaction[];
    plan: DeploymentPlan;
    reads: DeploymentReads;
    snapshot: RouteSnapshot;
    groups: BuiltGroups;
  },
): void {
  const { plan, reads, groups } = input;
  const onChainRoute = input.snapshot.route?.data ?? null;
  const done = deploymentDone(onChainRoute);
  const native = isNativeMint(transfer.tokenMint);
  const { sourceWallet, sourceTokenAccount } = reads;
  assertAffordable({
    transfer,
    built: input.built,
    plan,
    keeperFunding: plan.keeperFunding ? transfer.route.keeperFundingLamports : 0n,
    feeTokenCreated: plan.platformFeeTokenIn !== null,
    routeCreated: onChainRoute === null && !done,
    missingHops: done ? 0 : missingHops(transfer, onChainRoute),
    missingSteps: done ? 0 : transfer.hops - plan.resume.completedStepIndices.length,
    recipientTokenCreated:
      !native && !reads.recipientTokenAccount?.exists && groups.sessionInitTxs.length > 0,
    wrappedAccountOpened: native && !sourceTokenAccount?.exists && onChainRoute === null,
    screeningDeposit: platform.screeningRequired ? reads.config.screeningDepositLamports : 0n,
    sourceLamports: sourceWallet?.exists ? sourceWallet.lamports : 0n,
    sourceTokens:
      sourceTokenAccount?.exists && sourceTokenAccount.data.length === TOKEN_ACCOUNT_SIZE
        ? tokenDecoder.decode(sourceTokenAccount.data).amount
        : 0n,
    sourceToken: reads.sourceToken,
    price: reads.price,
    rents: reads.rents,
  });
}

/** The bundle as the contract shows it, with what a resumed deployment finds on chain. */
function bundleOf(
  transfer: Transfer & { route: RouteRecord },
  input: {
    groups: BuiltGroups;
    plan: DeploymentPlan;
    snapshot: RouteSnapshot;
    lifetime: BlockhashLifetime;
    empty: boolean;
  },
): PreparedBundle {
  const { groups, snapshot } = input;
  const onChainRoute = snapshot.route?.data ?? null;
  return {
    keeperFundingTx: groups.keeperFundingTx?.base64 ?? null,
    routeInitTxs: groups.routeInitTxs.map((tx) => ({ base64: tx.base64 })),
    orchestratorInitTx: groups.orchestratorInitTx?.base64 ?? null,
    sessionInitTxs: groups.sessionInitTxs.map((tx) => tx.base64),
    recentBlockhash: input.lifetime.blockhash,
    lastValidBlockHeight: Number(input.lifetime.lastValidBlockHeight),
    resume: {
      routeAlreadyDeployed: onChainRoute !== null && onChainRoute.hopsRegistered === transfer.hops - 1,
      // Hops whose path exists on chain: the route's last hop (to the recipient) comes with its
      // creation, each other one with its intermediate account.
      existingHopCount: onChainRoute === null ? 0 : onChainRoute.hopsRegistered + 1,
      totalHops: transfer.hops,
      orchestratorAlreadyInitialized: snapshot.orchestrator !== null,
      completedStepIndices: input.plan.resume.completedStepIndices,
      totalSteps: transfer.hops,
      keeperAlreadyFunded: snapshot.keeper.lamports >= transfer.route.keeperFundingLamports,
      nothingToDo: input.empty,
    },
  };
}
