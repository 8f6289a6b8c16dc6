import { rawToTokens } from '../src/domain/amounts.ts';

/*
 * The source's SOL as the demo tells it: what the estimate says before anything is sent, then
 * every movement of the source's lamports, measured, each fee shown as a fee, adding up to the
 * lamport to the change of its balance.
 */

/** Lamports with thousands separators (and a sign when `signed`), then "lamports". */
export function lamportsText(lamports: bigint, signed = false): string {
  const sign = lamports < 0n ? '-' : signed ? '+' : '';
  return `${sign}${(lamports < 0n ? -lamports : lamports).toLocaleString('en-US')} lamports`;
}

/** The estimate's SOL side, as the API answers it (integers of lamports). */
export interface EstimatedSol {
  requiredSolUpFrontLamports: number;
  breakdown: {
    routeInitRentLamports: number;
    orchestratorRentLamports: number;
    ataRentLamports: number;
    transactionFeesLamports: number;
    priorityFeesLamports: number;
    protocolFlatFeeLamports: number;
  };
  refundableLamports: number;
  netCostLamports: number;
}

/** A line of the display: a label and its value. */
export type Line = [label: string, value: string];

/**
 * The estimate's figures: the most paid up front, item by item (`besides` what else the source
 * sends: a native route's amount), what reclaim gives back, the net cost.
 */
export function estimateLines(sol: EstimatedSol, besides?: string): Line[] {
  const b = sol.breakdown;
  const n = (value: number) => BigInt(value).toLocaleString('en-US');
  const rent = b.routeInitRentLamports + b.orchestratorRentLamports + b.ataRentLamports;
  return [
    [
      'SOL up front',
      `at most ${lamportsText(BigInt(sol.requiredSolUpFrontLamports))} (${rawToTokens(BigInt(sol.requiredSolUpFrontLamports), 9)} SOL)${besides ? `, besides ${besides}` : ''}:`,
    ],
    [
      '  rent',
      `${n(rent)}: the route, its steps and keeper ${n(b.routeInitRentLamports)}, the orchestrator ${n(b.orchestratorRentLamports)}, token accounts ${n(b.ataRentLamports)}`,
    ],
    [
      '  network fees',
      `${n(b.transactionFeesLamports)}: the bundle's signatures and the keeper's hops, one more hop as its margin`,
    ],
    ['  priority fees', `${n(b.priorityFeesLamports)}: the bundle's and the keeper's budget for its hops`],
    ['  flat fee', `${n(b.protocolFlatFeeLamports)}: the platform's fee per hop`],
    [
      'back after reclaim',
      `${lamportsText(BigInt(sol.refundableLamports))}: the rent of the route's own accounts and what the keeper has left`,
    ],
    [
      'net cost',
      `at most ${lamportsText(BigInt(sol.netCostLamports))}, and the reclaim's own network fee when it is sent`,
    ],
  ];
}

/** What moved the source's lamports over the demo, measured on chain. */
export interface SolMovements {
  estimate: { upFront: bigint; refundable: bigint };
  /** What the bundle took from the source, a native route's amount aside. */
  bundle: bigint;
  /** What the estimate counts in full that this bundle did not pay for, and why (as far as known). */
  unneeded: { lamports: bigint; why: string }[];
  /** A native route's amount, moved by the bundle. */
  amount: { lamports: bigint; what: string } | undefined;
  /** Network fees of the source's own transactions besides the bundle and the recovery. */
  ownFees: { label: string; lamports: bigint; what: string }[];
  recovery: {
    kind: 'reclaim' | 'rescue';
    /** What came back, its fee aside. */
    back: bigint;
    announced: bigint;
    fee: bigint;
    signatures: number;
  };
  /** The change of the source's balance from before the bundle to after the recovery. */
  change: bigint;
}

/**
 * The movements as lines, adding up to `change`: what the demo cannot attribute (someone else
 * moving the source's lamports meanwhile) is a line of its own, never folded into another.
 */
export function movementLines(m: SolMovements): Line[] {
  const counted = m.estimate.upFront;
  const unneeded = m.unneeded.reduce((sum, item) => sum + item.lamports, 0n);
  const unexplained = counted - unneeded - m.bundle;
  const bundle =
    unneeded === 0n && unexplained === 0n
      ? `the estimate's "at most" in full`
      : [
          `the estimate's "at most" ${lamportsText(counted)}`,
          ...m.unneeded.map((item) => `less ${lamportsText(item.lamports)} ${item.why}`),
          ...(unexplained > 0n
            ? [`less ${lamportsText(unexplained)} it counted that this bundle did not pay`]
            : []),
          ...(unexplained < 0n ? [`and ${lamportsText(-unexplained)} more than it counted`] : []),
        ].join(', ');
  const { recovery } = m;
  const back = [
    recovery.back === recovery.announced ? 'as announced' : `announced ${lamportsText(recovery.announced)}`,
    ...(recovery.kind === 'reclaim'
      ? [
          recovery.back === m.estimate.refundable
            ? 'as the estimate said'
            : `the estimate said ${lamportsText(m.estimate.refundable)}`,
        ]
      : []),
  ].join(', ');
  const lines: Line[] = [
    ['the bundle', `${lamportsText(-m.bundle)}: ${bundle}`],
    ...(m.amount ? [['the amount', `${lamportsText(-m.amount.lamports)}: ${m.amount.what}`] as Line] : []),
    ...m.ownFees.map((fee): Line => [fee.label, `${lamportsText(-fee.lamports)}: ${fee.what}`]),
    [`${recovery.kind} back`, `${lamportsText(recovery.back, true)}: ${back}`],
    [
      `${recovery.kind}'s fee`,
      `${lamportsText(-recovery.fee)}: its network fee (${recovery.signatures} signature${recovery.signatures === 1 ? '' : 's'})`,
    ],
  ];
  const accounted =
    -m.bundle -
    (m.amount?.lamports ?? 0n) -
    m.ownFees.reduce((sum, fee) => sum + fee.lamports, 0n) +
    recovery.back -
    recovery.fee;
  if (m.change !== accounted) {
    lines.push([
      'not the demo’s',
      `${lamportsText(m.change - accounted, true)}: moved by someone else meanwhile`,
    ]);
  }
  lines.push(['net', `${lamportsText(m.change, true)}: the change of the source's SOL above`]);
  return lines;
}
