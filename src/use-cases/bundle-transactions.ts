import type { Address, Base64EncodedWireTransaction, TransactionError } from '@solana/kit';
import { computeUnitLimit } from '@transfer-router/landing';
import { customErrorCode, describeTransactionError, ROUTER_ERROR_CODES } from '../chain/router/errors.ts';
import {
  partiallySigned,
  simulate,
  TRANSACTION_SIZE_LIMIT,
  type UnsignedTransaction,
} from '../chain/transactions.ts';
import type { CallOptions, TransactionSimulator } from '../chain/types.ts';
import { AppError } from '../domain/errors.ts';
import { marketPrice } from '../domain/priority-fees.ts';
import type { Platform } from '../platform/platform.ts';

/*
 * The transactions the service hands a source to sign (a deployment, a rescue, a reclaim): their
 * compute-unit price from recent fees, their limit from simulation, and the size and simulation
 * checks made before anything is handed out.
 */

/** Reads the compute-unit prices recently paid for writing some accounts. */
export interface PriorityFeeReader {
  getRecentPrioritizationFees(
    addresses: readonly Address[],
    options?: CallOptions,
  ): Promise<readonly { slot: bigint; prioritizationFee: bigint }[]>;
}

/**
 * The compute-unit price of a bundle: the market's price ({@link marketPrice}) of writing the
 * source's or the route's accounts.
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
  return marketPrice(recent, {
    floorMicroLamportsPerCu: deps.priorityFeeFloorMicroLamportsPerCu,
    capMicroLamportsPerCu: deps.platform.priorityFeeCapMicroLamportsPerCu,
  });
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
  const limit = computeUnitLimit(simulated.unitsConsumed, fallbackUnits);
  const signed = await partiallySigned({ ...transaction, computeUnitLimit: limit });
  return { ...signed, name, computeUnitLimit: limit, simulationError: simulated.error };
}

/**
 * The reads a bundle was built from lag the node that simulated it (a node behind another, a
 * wallet's transaction landing meanwhile): an account the bundle's first transaction creates
 * exists already. A moment later they agree; past the request's deadline it is MH_091.
 */
export class ReadsBehindChain extends AppError {
  constructor(name: string) {
    super(
      'MH_091',
      `The chain moved on while the bundle was built: an account its ${name} creates exists now. Call prepare again in a moment.`,
      { headers: { 'retry-after': '1' } },
    );
  }
}

/**
 * MH_031 when the bundle's first transaction fails its simulation: it depends on nothing else of
 * the bundle, so it would fail on chain as well (later ones may only await what comes before);
 * {@link ReadsBehindChain} when it fails only because the reads it was built from are behind.
 */
export function assertFirstSimulates(built: readonly BuiltTransaction[]): void {
  const [first] = built;
  if (!first?.simulationError) return;
  if (customErrorCode(first.simulationError) === ROUTER_ERROR_CODES.AccountAlreadyInitialized) {
    throw new ReadsBehindChain(first.name);
  }
  throw new AppError(
    'MH_031',
    `The bundle's ${first.name} fails on the chain as it is now (${describeTransactionError(first.simulationError)}), so nothing was handed out. Call prepare again; if it persists, report it with the transfer's supportBundleId.`,
  );
}
