import {
  type Address,
  getAddressEncoder,
  getProgramDerivedAddress,
  getU64Encoder,
  type ProgramDerivedAddress,
} from '@solana/kit';
import { ROUTER_PROGRAM_ADDRESS } from './program.ts';

/*
 * Program-derived addresses of the router program:
 *   config        ["config"]
 *   orchestrator  ["orchestrator", source]
 *   route         ["route", source, routeId as u64 little-endian]
 *   custody       ["custody", route]
 *   step          ["step", route, index as u8]
 * Intermediate token accounts are not derived: they are fresh keypair addresses.
 */

const addressBytes = getAddressEncoder();

/** The protocol config account. */
export function findConfigPda(
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Promise<ProgramDerivedAddress> {
  return getProgramDerivedAddress({ programAddress, seeds: ['config'] });
}

/** The orchestrator config of a source wallet. */
export function findOrchestratorPda(
  source: Address,
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Promise<ProgramDerivedAddress> {
  return getProgramDerivedAddress({ programAddress, seeds: ['orchestrator', addressBytes.encode(source)] });
}

/** A route of a source wallet; `routeId` is chosen by the service (unique per source). */
export function findRoutePda(
  source: Address,
  routeId: bigint,
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Promise<ProgramDerivedAddress> {
  return getProgramDerivedAddress({
    programAddress,
    seeds: ['route', addressBytes.encode(source), getU64Encoder().encode(routeId)],
  });
}

/** The token account holding a route's tokens in custody. */
export function findCustodyPda(
  route: Address,
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Promise<ProgramDerivedAddress> {
  return getProgramDerivedAddress({ programAddress, seeds: ['custody', addressBytes.encode(route)] });
}

/** The step state of step `index` of a route. */
export function findStepPda(
  route: Address,
  index: number,
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Promise<ProgramDerivedAddress> {
  return getProgramDerivedAddress({
    programAddress,
    seeds: ['step', addressBytes.encode(route), new Uint8Array([index])],
  });
}

export interface RouteAddresses {
  route: ProgramDerivedAddress;
  custody: ProgramDerivedAddress;
  orchestrator: ProgramDerivedAddress;
  /** One per step, in order. */
  steps: ProgramDerivedAddress[];
}

/** Every derived address of one route. */
export async function findRouteAddresses(
  input: { source: Address; routeId: bigint; hopCount: number },
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Promise<RouteAddresses> {
  const route = await findRoutePda(input.source, input.routeId, programAddress);
  const [custody, orchestrator, steps] = await Promise.all([
    findCustodyPda(route[0], programAddress),
    findOrchestratorPda(input.source, programAddress),
    Promise.all(Array.from({ length: input.hopCount }, (_, i) => findStepPda(route[0], i, programAddress))),
  ]);
  return { route, custody, orchestrator, steps };
}
