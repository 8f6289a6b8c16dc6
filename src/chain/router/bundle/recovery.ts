// The recovery bundle of a route: its rescue or rent reclaim, with the keeper's sweep.
import type { Address, Instruction, TransactionSigner } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { getCreateAssociatedTokenIdempotentInstruction } from '@solana-program/token';
import type { Route } from '../accounts.ts';
import {
  getCloseOrchestratorInstruction,
  getReclaimInstruction,
  getRescueInstruction,
} from '../instructions.ts';
import { ROUTER_PROGRAM_ADDRESS } from '../program.ts';
import { chunk, MAX_CLOSES_IN_RECOVERY_TX } from './limits.ts';

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
