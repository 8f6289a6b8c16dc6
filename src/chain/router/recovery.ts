import type { Address, MaybeEncodedAccount } from '@solana/kit';
import { getTokenDecoder } from '@solana-program/token';
import type { RecoveryAccountKind } from '../../domain/transfer.ts';
import {
  decodeOrchestrator,
  decodeRoute,
  decodeStep,
  type Orchestrator,
  type Route,
  type Step,
  TOKEN_ACCOUNT_SIZE,
} from './accounts.ts';
import { findRouteAddresses, findStepPda, type RouteAddresses } from './pda.ts';
import { ROUTER_PROGRAM_ADDRESS } from './program.ts';

/*
 * What a route's rescue or rent reclaim would return, computed from the accounts on chain (the
 * same rules the program applies), for the API's `recovery` object and the bundles' totals.
 */

/** Reads accounts in one batch, in order; kit's `fetchEncodedAccounts` has this shape. */
export type AccountReader = (addresses: Address[]) => Promise<readonly MaybeEncodedAccount[]>;

export interface RouteSnapshot {
  routeAddress: Address;
  /**
   * Every step state address of the route, in order: as many as the route on chain has steps (a
   * route deployed by someone else may have more than its transfer), else as many as asked for.
   */
  stepAddresses: Address[];
  route: { lamports: bigint; data: Route } | null;
  /**
   * Custody and intermediate token accounts that exist: the lamports closing one returns to the
   * source's wallet (its rent; wrapped SOL's lamports go with its tokens to the source's token
   * account) and the tokens it holds.
   */
  tokenAccounts: { address: Address; lamports: bigint; amount: bigint }[];
  /** Step states that exist. */
  steps: { address: Address; lamports: bigint; data: Step }[];
  orchestrator: { address: Address; lamports: bigint; data: Orchestrator } | null;
  keeper: { address: Address; lamports: bigint };
}

const tokenDecoder = getTokenDecoder();

/**
 * Reads every account of a route (two batched reads: the route names its intermediate accounts).
 * A caller that derived the route's addresses already passes them: each derivation hashes and
 * checks a curve point per bump tried, which prepare measurably paid twice (bench/prepare.ts).
 */
export async function readRouteSnapshot(
  read: AccountReader,
  input: {
    source: Address;
    routeId: bigint;
    hopCount: number;
    keeper: Address;
    addresses?: RouteAddresses | undefined;
  },
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Promise<RouteSnapshot> {
  const addresses = input.addresses ?? (await findRouteAddresses(input, programAddress));
  const stepAddresses = addresses.steps.map(([a]) => a);
  const [routeAccount, orchestratorAccount, keeperAccount, custodyAccount, ...stepAccounts] = await read([
    addresses.route[0],
    addresses.orchestrator[0],
    input.keeper,
    addresses.custody[0],
    ...stepAddresses,
  ]);
  const owned = (a: MaybeEncodedAccount | undefined) =>
    a?.exists && a.programAddress === programAddress ? a : undefined;
  const routeOwned = owned(routeAccount);
  const route = routeOwned ? { lamports: routeOwned.lamports, data: decodeRoute(routeOwned.data) } : null;
  // Steps beyond those asked for, when the route on chain has more, are read with its hops.
  const extraSteps = await Promise.all(
    Array.from({ length: Math.max(0, (route?.data.hopCount ?? 0) - stepAddresses.length) }, (_, i) =>
      findStepPda(addresses.route[0], stepAddresses.length + i, programAddress).then(([a]) => a),
    ),
  );
  const more =
    route && route.data.hops.length + extraSteps.length > 0
      ? await read([...route.data.hops, ...extraSteps])
      : [];
  const hopAccounts = more.slice(0, route?.data.hops.length ?? 0);
  stepAccounts.push(...more.slice(route?.data.hops.length ?? 0));
  stepAddresses.push(...extraSteps);
  const tokenAccounts = [custodyAccount, ...hopAccounts].flatMap((a) => {
    if (!a?.exists || a.data.length !== TOKEN_ACCOUNT_SIZE) return [];
    const { amount, isNative } = tokenDecoder.decode(a.data);
    const lamports = isNative.__option === 'Some' ? a.lamports - amount : a.lamports;
    return [{ address: a.address, lamports, amount }];
  });
  const steps = stepAccounts.flatMap((a) => {
    const s = owned(a);
    return s ? [{ address: s.address, lamports: s.lamports, data: decodeStep(s.data) }] : [];
  });
  const orchestratorOwned = owned(orchestratorAccount);
  return {
    routeAddress: addresses.route[0],
    stepAddresses,
    route,
    tokenAccounts,
    steps,
    orchestrator: orchestratorOwned
      ? {
          address: orchestratorOwned.address,
          lamports: orchestratorOwned.lamports,
          data: decodeOrchestrator(orchestratorOwned.data),
        }
      : null,
    keeper: { address: input.keeper, lamports: keeperAccount?.exists ? keeperAccount.lamports : 0n },
  };
}

export interface RecoveryAccount {
  kind: RecoveryAccountKind;
  address: Address;
  lamports: bigint;
}

export interface RecoveryFigures {
  /** The program would accept a Rescue of this route now. */
  canRescue: boolean;
  rescuableTokens: bigint;
  rescuableLamports: bigint;
  rescuableAccounts: RecoveryAccount[];
  /** The program would accept a Reclaim now (or only the orchestrator and keeper are left). */
  canReclaimRent: boolean;
  reclaimableLamports: bigint;
  reclaimableStepCount: number;
  reclaimableAccounts: RecoveryAccount[];
}

const sum = (accounts: readonly RecoveryAccount[]) => accounts.reduce((total, a) => total + a.lamports, 0n);

/** Rescuable and reclaimable amounts of a route at unix time `now`, from a snapshot. */
export function computeRecovery(snapshot: RouteSnapshot, now: bigint): RecoveryFigures {
  const route = snapshot.route?.data;
  const accounts: RecoveryAccount[] = [];
  if (snapshot.route) {
    accounts.push({ kind: 'route_pda', address: snapshot.routeAddress, lamports: snapshot.route.lamports });
  }
  for (const s of snapshot.steps)
    accounts.push({ kind: 'step_state', address: s.address, lamports: s.lamports });
  for (const t of snapshot.tokenAccounts)
    accounts.push({ kind: 'ata', address: t.address, lamports: t.lamports });
  const o = snapshot.orchestrator;
  if (o && o.data.openRoutes - (route?.inOrchestrator ? 1 : 0) === 0) {
    accounts.push({ kind: 'orchestrator_config', address: o.address, lamports: o.lamports });
  }
  if (snapshot.keeper.lamports > 0n) {
    accounts.push({ kind: 'keeper', address: snapshot.keeper.address, lamports: snapshot.keeper.lamports });
  }
  const lamports = sum(accounts);
  const tokens = snapshot.tokenAccounts.reduce((total, t) => total + t.amount, 0n);
  const status = route?.status;
  const rescuable =
    status === 'deploying' ||
    status === 'failed' ||
    status === 'flagged' ||
    status === 'rescued' ||
    (status === 'active' && route !== undefined && now > route.deadlineAt);
  const reclaimable = status === 'settled' || status === 'rescued' || (route === undefined && lamports > 0n);
  return {
    canRescue: rescuable && lamports > 0n,
    rescuableTokens: rescuable ? tokens : 0n,
    rescuableLamports: rescuable ? lamports : 0n,
    rescuableAccounts: rescuable ? accounts : [],
    canReclaimRent: reclaimable && lamports > 0n,
    reclaimableLamports: reclaimable ? lamports : 0n,
    reclaimableStepCount: reclaimable ? snapshot.steps.length : 0,
    reclaimableAccounts: reclaimable ? accounts : [],
  };
}
