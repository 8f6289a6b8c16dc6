// The instructions that return a route's tokens and rent to its source: rescue, reclaim, and the
// closing of the orchestrator config.
import type { Address, Instruction, TransactionSigner } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { ROUTER_PROGRAM_ADDRESS } from '../program.ts';
import { bytes, instruction, RouterInstruction, readonly, signerMeta, writable } from './encoding.ts';

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
