import type { Address } from '@solana/kit';
import { isNativeMint } from '../chain/router/accounts.ts';
import type { DeploymentPlan } from '../chain/router/bundle.ts';
import { AppError } from '../domain/errors.ts';
import { LAMPORTS_PER_SIGNATURE, priorityFeeLamports } from '../domain/route.ts';
import type { Transfer } from '../domain/transfer.ts';
import type { BuiltTransaction } from './bundle-transactions.ts';

/** SOL with nine decimals, for messages. */
const sol = (lamports: bigint) => {
  const text = lamports.toString().padStart(10, '0');
  return `${text.slice(0, -9)}.${text.slice(-9)}`.replace(/\.?0+$/, '');
};

/**
 * Refuses with MH_016, naming what is short, a bundle the source cannot pay for: the tokens of the
 * route, and the lamports of every account the bundle keeps open, the keeper's funding, the flat
 * fee, the screening deposit and every transaction's fees.
 */
export function assertAffordable(input: {
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
  // The wrapped-SOL account the route's creation opens, it closes again: its rent is lent for that
  // transaction and back before the later ones pay for the orchestrator config and the step
  // states, so it counts only for what it exceeds them by (nothing at 3 hops or more).
  const paidAfterCreation =
    (input.plan.orchestratorInit ? orchestratorRent : 0n) + stepRent * BigInt(input.missingSteps);
  const lentBeyond =
    input.wrappedAccountOpened && tokenRent > paidAfterCreation ? tokenRent - paidAfterCreation : 0n;
  add(
    (input.routeCreated ? routeRent + tokenRent : 0n) +
      tokenRent * BigInt(input.missingHops) +
      (input.plan.orchestratorInit ? orchestratorRent : 0n) +
      stepRent * BigInt(input.missingSteps) +
      (input.recipientTokenCreated ? tokenRent : 0n) +
      (input.feeTokenCreated ? tokenRent : 0n) +
      lentBeyond,
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
