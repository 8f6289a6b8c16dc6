import {
  type Address,
  type Base64EncodedWireTransaction,
  createKeyPairSignerFromPrivateKeyBytes,
  createNoopSigner,
  generateKeyPairSigner,
  type Instruction,
  type TransactionError,
} from '@solana/kit';
import { findAssociatedTokenPda, getTokenDecoder, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import {
  decodeRouterConfig,
  isNativeMint,
  ORCHESTRATOR_ACCOUNT_SIZE,
  ROUTE_ACCOUNT_SIZE,
  STEP_ACCOUNT_SIZE,
  TOKEN_ACCOUNT_SIZE,
} from '../chain/router/accounts.ts';
import { type DeploymentPlan, planDeployment } from '../chain/router/bundle.ts';
import { describeTransactionError } from '../chain/router/errors.ts';
import { COMPUTE_UNIT_LIMITS } from '../chain/router/footprint.ts';
import type { RouteTerms } from '../chain/router/instructions.ts';
import { findRouteAddresses } from '../chain/router/pda.ts';
import {
  partiallySigned,
  simulate,
  TRANSACTION_SIZE_LIMIT,
  type UnsignedTransaction,
} from '../chain/transactions.ts';
import type {
  AccountReader,
  BlockhashReader,
  CallOptions,
  ClockReader,
  RentReader,
  TransactionSimulator,
} from '../chain/types.ts';
import type { Clock } from '../domain/clock.ts';
import { AppError } from '../domain/errors.ts';
import {
  keeperFundingLamports,
  LAMPORTS_PER_SIGNATURE,
  priorityFeeLamports,
  routeSchedule,
} from '../domain/route.ts';
import type { PreparedRouteTerms } from '../domain/route-terms.ts';
import type { Transfer } from '../domain/transfer.ts';
import type { Platform } from '../platform/platform.ts';
import type { DeploymentStore } from '../store/deployments.ts';
import { readMaybeAccounts, readRoute } from './route-reads.ts';

/** Reads the compute-unit prices recently paid for writing some accounts. */
export interface PriorityFeeReader {
  getRecentPrioritizationFees(
    addresses: readonly Address[],
    options?: CallOptions,
  ): Promise<readonly { slot: bigint; prioritizationFee: bigint }[]>;
}

export interface PrepareDeps {
  chain: AccountReader &
    BlockhashReader &
    ClockReader &
    RentReader &
    TransactionSimulator &
    PriorityFeeReader;
  deployments: Pick<DeploymentStore, 'assignRoute'>;
  platform: Pick<
    Platform,
    | 'programAddress'
    | 'configAddress'
    | 'screeningRequired'
    | 'routeGraceSeconds'
    | 'priorityFeeCapMicroLamportsPerCu'
  >;
  clock: Clock;
  /** The least compute-unit price a prepared transaction offers (PRIORITY_FEE_MICROLAMPORTS_PER_CU). */
  priorityFeeFloorMicroLamportsPerCu: bigint;
}

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

/** Percentile `p` (0..1) of some prices, 0 when there are none. */
function percentile(values: readonly bigint[], p: number): bigint {
  if (values.length === 0) return 0n;
  const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/** SOL with nine decimals, for messages. */
const sol = (lamports: bigint) => {
  const text = lamports.toString().padStart(10, '0');
  return `${text.slice(0, -9)}.${text.slice(-9)}`.replace(/\.?0+$/, '');
};

/**
 * The compute-unit price of a bundle: the 75th percentile of what recently landed writing the
 * source's or the route's accounts, at least the configured floor, at most the configured cap.
 */
export async function bundlePrice(
  deps: {
    chain: PriorityFeeReader;
    platform: Pick<Platform, 'priorityFeeCapMicroLamportsPerCu'>;
    priorityFeeFloorMicroLamportsPerCu: bigint;
  },
  accounts: Address[],
  options: CallOptions,
): Promise<bigint> {
  const recent = await deps.chain.getRecentPrioritizationFees(accounts, options);
  const observed = percentile(
    recent.map((fee) => fee.prioritizationFee),
    0.75,
  );
  let price = observed;
  if (price < deps.priorityFeeFloorMicroLamportsPerCu) price = deps.priorityFeeFloorMicroLamportsPerCu;
  if (price > deps.platform.priorityFeeCapMicroLamportsPerCu)
    price = deps.platform.priorityFeeCapMicroLamportsPerCu;
  return price;
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
  deps: PrepareDeps,
  transfer: Transfer,
  options: CallOptions = {},
): Promise<{ transfer: Transfer; bundle: PreparedBundle; terms: PreparedRouteTerms | null }> {
  const { chain, platform } = deps;
  const source = transfer.sourceOwner;
  const mint = transfer.tokenMint;
  const native = isNativeMint(mint);
  const routeId = BigInt(transfer.id);
  const ata = (owner: Address) =>
    findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS }).then(([address]) => address);
  /** The route's and the token accounts' addresses, then the reads that need them. */
  const addressed = async () => {
    const [addresses, sourceToken, platformFeeToken, recipientToken] = await Promise.all([
      findRouteAddresses({ source, routeId, hopCount: transfer.hops }, platform.programAddress),
      ata(source),
      // The platform's fees settle into the config account's token account of the mint, which
      // only the program can move or close (docs/program.md).
      ata(platform.configAddress),
      ata(transfer.recipientWallet),
    ]);
    const [price, accounts] = await Promise.all([
      bundlePrice(deps, [source, addresses.route[0]], options),
      readMaybeAccounts(
        chain,
        [source, sourceToken, platformFeeToken, recipientToken, platform.configAddress],
        options,
      ),
    ]);
    return { addresses, sourceToken, platformFeeToken, recipientToken, price, accounts };
  };
  const rent = (size: number) =>
    chain.getMinimumBalanceForRentExemption(size, options).then((lamports) => BigInt(lamports));
  // Every read that needs neither the keeper nor the route on chain, at once; those that need no
  // address go while the addresses are derived.
  const [
    {
      addresses,
      sourceToken,
      platformFeeToken,
      recipientToken,
      price,
      accounts: [sourceWallet, sourceTokenAccount, feeTokenAccount, recipientTokenAccount, configAccount],
    },
    lifetime,
    chainClock,
    keeperRent,
    rents,
    keeper,
  ] = await Promise.all([
    addressed(),
    chain.getLatestBlockhash(options),
    chain.getClock(options),
    rent(0),
    Promise.all([
      rent(ROUTE_ACCOUNT_SIZE),
      rent(TOKEN_ACCOUNT_SIZE),
      rent(ORCHESTRATOR_ACCOUNT_SIZE),
      rent(STEP_ACCOUNT_SIZE),
    ]),
    transfer.route ? null : newKeeper(),
  ]);

  const assigned = keeper
    ? await deps.deployments.assignRoute(transfer.id, {
        routeAddress: addresses.route[0],
        keeper: keeper.address,
        keeperPrivateKey: keeper.privateKey,
        keeperFundingLamports: keeperFundingLamports({
          hops: transfer.hops,
          rentExemptMinimum: keeperRent,
          hopComputeUnitLimit: COMPUTE_UNIT_LIMITS.executeStep,
          microLamportsPerCu: price,
        }),
        hopPriorityMicroLamports: price,
        now: deps.clock.now(),
      })
    : transfer;
  const route = assigned.route!;
  const snapshot = await readRoute(
    chain,
    platform.programAddress,
    { ...assigned, route },
    options,
    addresses,
  );
  if (!configAccount?.exists) {
    throw new AppError('MH_091', 'The router is not set up on this cluster yet. Retry later.');
  }
  const config = decodeRouterConfig(configAccount.data);
  const onChainRoute = snapshot.route?.data ?? null;
  const keeperFunded = snapshot.keeper.lamports >= route.keeperFundingLamports;
  const deploymentDone = onChainRoute !== null && onChainRoute.status !== 'deploying';

  const schedule = routeSchedule({
    t0: chainClock.unixTimestamp,
    arrivalSeconds: transfer.arrivalSeconds,
    hops: transfer.hops,
    graceSeconds: platform.routeGraceSeconds,
  });
  const terms: RouteTerms = {
    routeId,
    hopCount: transfer.hops,
    amount: transfer.amountRaw,
    percentFeeBps: transfer.percentFeeBps,
    // Both fee shares settle into the platform's accounts (decisions, "Fee destinations"); the
    // integrator's share is credited from what the route paid when the transfer settles.
    integratorShareBps: 0,
    flatFeePerHopLamports: transfer.flatFeeLamportsPerHop,
    ...schedule,
    keeper: route.keeper,
    recipient: transfer.recipientWallet,
    recipientToken: native ? null : recipientToken,
    integratorWallet: platform.configAddress,
    screeningRequired: platform.screeningRequired,
    maxDepositLamports: platform.screeningRequired ? config.screeningDepositLamports : 0n,
  };
  const sourceSigner = createNoopSigner(source);
  const missingHops =
    onChainRoute === null ? transfer.hops - 1 : transfer.hops - 1 - onChainRoute.hopsRegistered;
  const feeTokenMissing = !feeTokenAccount?.exists;
  const plan = planDeployment({
    source: sourceSigner,
    keeper: route.keeper,
    keeperFundingLamports: route.keeperFundingLamports,
    terms,
    mint,
    sourceToken,
    config: platform.configAddress,
    platformFeeToken,
    integratorFeeToken: platformFeeToken,
    addresses,
    hopSigners: await Promise.all(
      Array.from({ length: deploymentDone ? 0 : missingHops }, generateKeyPairSigner),
    ),
    onChain: {
      keeperFunded,
      route: onChainRoute,
      orchestratorExists: snapshot.orchestrator !== null,
    },
    createPlatformFeeToken: feeTokenMissing,
    // A wrapped-SOL account the bundle opens is closed again once the route took its SOL.
    ...(native ? { wrapSol: { amount: transfer.amountRaw, closeAfter: !sourceTokenAccount?.exists } } : {}),
    programAddress: platform.programAddress,
  });
  // Keeper funding is offered whenever the keeper lacks it, even under a deployed route: it pays
  // every hop, and the route is not taken over without it.
  const keeperFunding = plan.keeperFunding;
  const routeInit = deploymentDone ? [] : plan.routeInit;
  const orchestratorInit = deploymentDone ? null : plan.orchestratorInit;
  const sessionInit = deploymentDone ? [] : plan.sessionInit;
  const feeTokenUnits = (group: DeploymentPlan['platformFeeTokenIn']) =>
    plan.platformFeeTokenIn === group ? COMPUTE_UNIT_LIMITS.createTokenAccount : 0;

  const build = (name: string, instructions: Instruction[], version: 0 | 'legacy', fallbackUnits: number) =>
    buildTransaction(
      deps,
      { name, feePayer: source, instructions, version, lifetime, microLamportsPerCu: price },
      fallbackUnits,
      options,
    );
  const [keeperFundingTx, routeInitTxs, orchestratorInitTx, sessionInitTxs] = await Promise.all([
    keeperFunding
      ? build(
          'keeperFundingTx',
          keeperFunding,
          0,
          COMPUTE_UNIT_LIMITS.keeperFunding + feeTokenUnits('keeperFunding'),
        )
      : null,
    Promise.all(
      routeInit.map((instructions, index) =>
        build(
          `routeInitTxs[${index}]`,
          instructions,
          0,
          // What route creation cannot simulate before the keeper funding lands (the platform's fee
          // account it creates) is counted from measured figures: the route, wrapping SOL, and the
          // fee account when this transaction creates it.
          index === 0 && onChainRoute === null
            ? COMPUTE_UNIT_LIMITS.createRoute +
                (native ? COMPUTE_UNIT_LIMITS.wrapSol : 0) +
                feeTokenUnits('routeInit')
            : COMPUTE_UNIT_LIMITS.addHops,
        ),
      ),
    ),
    orchestratorInit
      ? build('orchestratorInitTx', orchestratorInit, 'legacy', COMPUTE_UNIT_LIMITS.orchestratorInit)
      : null,
    Promise.all(
      sessionInit.map((instructions, index) =>
        build(`sessionInitTxs[${index}]`, instructions, 0, COMPUTE_UNIT_LIMITS.sessionInit),
      ),
    ),
  ]);

  const built = [keeperFundingTx, ...routeInitTxs, orchestratorInitTx, ...sessionInitTxs].flatMap((tx) =>
    tx ? [tx] : [],
  );
  assertAffordable({
    transfer,
    built,
    plan,
    keeperFunding: keeperFunding ? route.keeperFundingLamports : 0n,
    feeTokenCreated: plan.platformFeeTokenIn !== null,
    routeCreated: onChainRoute === null && !deploymentDone,
    missingHops: deploymentDone ? 0 : missingHops,
    missingSteps: deploymentDone ? 0 : transfer.hops - plan.resume.completedStepIndices.length,
    recipientTokenCreated: !native && !recipientTokenAccount?.exists && sessionInit.length > 0,
    wrappedAccountOpened: native && !sourceTokenAccount?.exists && onChainRoute === null,
    screeningDeposit: platform.screeningRequired ? config.screeningDepositLamports : 0n,
    sourceLamports: sourceWallet?.exists ? sourceWallet.lamports : 0n,
    sourceTokens:
      sourceTokenAccount?.exists && sourceTokenAccount.data.length === TOKEN_ACCOUNT_SIZE
        ? tokenDecoder.decode(sourceTokenAccount.data).amount
        : 0n,
    sourceToken,
    price,
    rents,
  });
  assertFirstSimulates(built);

  const nothingToDo = built.length === 0;
  return {
    terms:
      onChainRoute === null
        ? {
            ...terms,
            mint,
            platformWallet: platform.configAddress,
            platformFeeToken,
            integratorFeeToken: platformFeeToken,
          }
        : null,
    transfer: assigned,
    bundle: {
      keeperFundingTx: keeperFundingTx?.base64 ?? null,
      routeInitTxs: routeInitTxs.map((tx) => ({ base64: tx.base64 })),
      orchestratorInitTx: orchestratorInitTx?.base64 ?? null,
      sessionInitTxs: sessionInitTxs.map((tx) => tx.base64),
      recentBlockhash: lifetime.blockhash,
      lastValidBlockHeight: Number(lifetime.lastValidBlockHeight),
      resume: {
        routeAlreadyDeployed: onChainRoute !== null && onChainRoute.hopsRegistered === transfer.hops - 1,
        // Hops whose path exists on chain: the route's last hop (to the recipient) comes with its
        // creation, each other one with its intermediate account.
        existingHopCount: onChainRoute === null ? 0 : onChainRoute.hopsRegistered + 1,
        totalHops: transfer.hops,
        orchestratorAlreadyInitialized: snapshot.orchestrator !== null,
        completedStepIndices: plan.resume.completedStepIndices,
        totalSteps: transfer.hops,
        keeperAlreadyFunded: keeperFunded,
        nothingToDo,
      },
    },
  };
}

/** A fresh keeper key for a transfer's first prepare. */
async function newKeeper(): Promise<{ address: Address; privateKey: Uint8Array }> {
  const privateKey = crypto.getRandomValues(new Uint8Array(32));
  const { address } = await createKeyPairSignerFromPrivateKeyBytes(privateKey);
  return { address, privateKey };
}

/** A bundle transaction as handed out, with what its fees are counted from. */
export interface BuiltTransaction {
  /** Which transaction of the bundle it is, as the response names it (e.g. `routeInitTxs[1]`). */
  name: string;
  base64: Base64EncodedWireTransaction;
  signatures: number;
  computeUnitLimit: number;
  /** Why simulating it failed; it may only depend on a transaction before it in the bundle. */
  simulationError: TransactionError | null;
}

/**
 * A bundle transaction with a compute-unit limit sized from simulating it (plus a tenth), or the
 * program's measured figure when it cannot run before earlier transactions of the bundle land.
 * One that would exceed the size limit is refused (MH_031) before anything is asked of the chain.
 */
export async function buildTransaction(
  deps: { chain: TransactionSimulator },
  input: Omit<UnsignedTransaction, 'computeUnitLimit'> & { name: string },
  fallbackUnits: number,
  options: CallOptions,
): Promise<BuiltTransaction> {
  const { name, ...transaction } = input;
  const simulated = await simulate(deps.chain, transaction, options);
  if (simulated.size > TRANSACTION_SIZE_LIMIT) {
    throw new AppError(
      'MH_031',
      `The bundle's ${name} would be ${simulated.size} bytes, above the ${TRANSACTION_SIZE_LIMIT} a transaction may hold. Nothing was handed out; report this with the transfer's supportBundleId.`,
    );
  }
  const computeUnitLimit =
    simulated.unitsConsumed === null ? fallbackUnits : Math.ceil(simulated.unitsConsumed * 1.1) + 1_000;
  const signed = await partiallySigned({ ...transaction, computeUnitLimit });
  return { ...signed, name, computeUnitLimit, simulationError: simulated.error };
}

/**
 * MH_031 when the bundle's first transaction fails its simulation: it depends on nothing else of
 * the bundle, so it would fail on chain as well. (Later ones may only await what comes before.)
 */
function assertFirstSimulates(built: readonly BuiltTransaction[]): void {
  const [first] = built;
  if (!first?.simulationError) return;
  throw new AppError(
    'MH_031',
    `The bundle's ${first.name} fails on the chain as it is now (${describeTransactionError(first.simulationError)}), so nothing was handed out. Call prepare again; if it persists, report it with the transfer's supportBundleId.`,
  );
}

/**
 * Refuses with MH_016, naming what is short, a bundle the source cannot pay for: the tokens of the
 * route, and the lamports of every account the bundle creates, the keeper's funding, the flat
 * fee, the screening deposit and every transaction's fees.
 */
function assertAffordable(input: {
  transfer: Transfer;
  built: BuiltTransaction[];
  plan: DeploymentPlan;
  keeperFunding: bigint;
  feeTokenCreated: boolean;
  routeCreated: boolean;
  missingHops: number;
  missingSteps: number;
  recipientTokenCreated: boolean;
  wrappedAccountOpened: boolean;
  screeningDeposit: bigint;
  sourceLamports: bigint;
  sourceTokens: bigint;
  sourceToken: Address;
  price: bigint;
  /** Rent-exempt minimums of a route account, a token account, an orchestrator config, a step state. */
  rents: [bigint, bigint, bigint, bigint];
}): void {
  const { transfer } = input;
  const native = isNativeMint(transfer.tokenMint);
  if (input.built.length === 0) return;
  const [routeRent, tokenRent, orchestratorRent, stepRent] = input.rents;
  // What the source pays for the bundle, and in words what it pays for.
  const costs = { lamports: 0n, items: [] as string[] };
  const add = (lamports: bigint, item: string) => {
    if (lamports === 0n) return;
    costs.lamports += lamports;
    costs.items.push(item);
  };
  add(
    input.built.reduce(
      (sum, tx) =>
        sum +
        LAMPORTS_PER_SIGNATURE * BigInt(tx.signatures) +
        priorityFeeLamports(tx.computeUnitLimit, input.price),
      0n,
    ),
    'transaction fees',
  );
  add(input.keeperFunding, "the keeper's funding");
  add(
    (input.routeCreated ? routeRent + tokenRent : 0n) +
      tokenRent * BigInt(input.missingHops) +
      (input.plan.orchestratorInit ? orchestratorRent : 0n) +
      stepRent * BigInt(input.missingSteps) +
      (input.recipientTokenCreated ? tokenRent : 0n) +
      (input.feeTokenCreated ? tokenRent : 0n) +
      (input.wrappedAccountOpened ? tokenRent : 0n),
    'account rent',
  );
  if (input.routeCreated) {
    add(transfer.totalFlatFeeLamports, 'the flat fee');
    add(input.screeningDeposit, 'the screening deposit');
    if (native) add(transfer.amountRaw, 'the amount');
  }
  if (input.sourceLamports < costs.lamports) {
    throw new AppError(
      'MH_016',
      `sourceOwner ${transfer.sourceOwner} holds ${sol(input.sourceLamports)} SOL but deploying this route needs ${sol(costs.lamports)} SOL (${costs.items.join(', ')}): add at least ${costs.lamports - input.sourceLamports} lamports.`,
      { param: 'sourceOwner' },
    );
  }
  if (input.routeCreated && !native && input.sourceTokens < transfer.amountRaw) {
    throw new AppError(
      'MH_016',
      `sourceOwner ${transfer.sourceOwner} holds ${input.sourceTokens} base units of ${transfer.tokenMint} in its token account ${input.sourceToken} but the route needs ${transfer.amountRaw}.`,
      { param: 'sourceOwner' },
    );
  }
}
