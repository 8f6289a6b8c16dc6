import type { Signature } from '@solana/kit';
import { type BundleLifetime, type BundleSenderOptions, createBundleSender } from './bundle.ts';
import {
  type CallOptions,
  isTransferRouterError,
  type Transfer,
  type TransferRouterClient,
} from './client.ts';
import { isLandingError } from './landing-error.ts';

/** Which recovery: `rescue` (a route that cannot finish) or `reclaim` (the rent of one that ended). */
export type RecoveryKind = 'rescue' | 'reclaim';

/** What {@link rescue} or {@link reclaimRent} is doing, for a progress display or a log. */
export type RecoveryProgress =
  /** A bundle to broadcast (`resumed` after the first): `totalLamports` is what it returns to the source. */
  | {
      kind: 'prepared';
      transactions: number;
      totalLamports: number;
      lifetime: BundleLifetime;
      resumed: boolean;
    }
  /** One transaction landed and is confirmed. */
  | { kind: 'confirmed'; index: number; count: number; signature: Signature }
  /**
   * Transaction `index` could not land as prepared (its blockhash expired, or the route changed
   * since, e.g. a keeper's hop): what landed is reported, and a fresh bundle covers the rest.
   */
  | { kind: 'stale'; index: number; reason: 'blockhash_expired' | 'chain_changed'; error: unknown }
  /** What landed of the bundle is reported (when anything did): the transfer as the service now shows it. */
  | { kind: 'reported'; transfer: Transfer };

export interface RecoveryOptions extends BundleSenderOptions {
  transferId: number;
  /** How many bundles to try before giving up, the first one included (default 5). */
  maxBundles?: number;
  onProgress?: (progress: RecoveryProgress) => void | Promise<void>;
}

/** The answer of {@link rescue} and {@link reclaimRent}. */
export interface RecoveryResult {
  /** The transfer once nothing is left to recover: phase `rescued` after a rescue. */
  transfer: Transfer;
  /** Every signature reported, from every bundle (none when an earlier run had done it all). */
  signatures: Signature[];
}

/** Whether a recovery transaction could not land because the chain moved on since its bundle was prepared. */
function staleReason(error: unknown): 'blockhash_expired' | 'chain_changed' | undefined {
  if (isLandingError(error, 'expired')) return 'blockhash_expired';
  // Refused in preflight, or landed and failed: the accounts it closes no longer hold what the
  // bundle was built for.
  if (isLandingError(error, 'refused', 'failed')) return 'chain_changed';
  return undefined;
}

/** The operations of one kind of recovery, and when it is done. */
function operationsOf(client: RecoveryClient, kind: RecoveryKind, call: CallOptions) {
  if (kind === 'rescue') {
    return {
      prepare: async (id: number) => {
        const bundle = await client.prepareRescue(id, call);
        return { ...bundle, txs: bundle.rescueTxs, totalLamports: bundle.rescuable.totalLamports };
      },
      report: async (id: number, signatures: Signature[]) =>
        (await client.confirmRescue(id, signatures, call)).transfer,
      done: (transfer: Transfer) => transfer.phase === 'rescued',
    };
  }
  return {
    prepare: async (id: number) => {
      const bundle = await client.prepareRentReclaim(id, call);
      return { ...bundle, txs: bundle.reclaimTxs, totalLamports: bundle.reclaimable.totalLamports };
    },
    report: async (id: number, signatures: Signature[]) => {
      const { failed } = await client.confirmRentReclaim(id, signatures, call);
      if (failed.length > 0) {
        throw new Error(
          `the service did not count ${failed.length} reclaim signature(s): ${failed.map((entry) => `${entry.signature}: ${entry.error}`).join('; ')}`,
        );
      }
      return client.getTransfer(id, call);
    },
    done: (transfer: Transfer) =>
      ['settled', 'reclaimed', 'rescued'].includes(transfer.phase) &&
      transfer.recovery?.canReclaimRent === false,
  };
}

type RecoveryClient = Pick<
  TransferRouterClient,
  'getTransfer' | 'prepareRescue' | 'confirmRescue' | 'prepareRentReclaim' | 'confirmRentReclaim'
>;

/**
 * Prepares a recovery bundle, signs and sends its transactions in order with the source's
 * `signer` (each confirmed before the next), and reports what landed; when a transaction can no
 * longer land as prepared, reports what did and prepares again, until nothing is left.
 */
async function recover(
  client: RecoveryClient,
  kind: RecoveryKind,
  options: RecoveryOptions,
): Promise<RecoveryResult> {
  const { transferId } = options;
  const call: CallOptions = options.signal ? { signal: options.signal } : {};
  const operations = operationsOf(client, kind, call);
  const send = createBundleSender(options);
  const maxBundles = options.maxBundles ?? 5;
  const progress = async (event: RecoveryProgress) => options.onProgress?.(event);
  const reported: Signature[] = [];

  for (let attempt = 1; ; attempt++) {
    let bundle: Awaited<ReturnType<typeof operations.prepare>>;
    try {
      bundle = await operations.prepare(transferId);
    } catch (error) {
      // Not allowed now, or nothing left on chain: perhaps done already, by an earlier run.
      if (!isTransferRouterError(error, 'MH_080', 'MH_081', 'MH_082')) throw error;
      const transfer = await client.getTransfer(transferId, call);
      if (operations.done(transfer)) return { transfer, signatures: reported };
      throw error;
    }
    await progress({
      kind: 'prepared',
      transactions: bundle.txs.length,
      totalLamports: bundle.totalLamports,
      lifetime: {
        recentBlockhash: bundle.recentBlockhash,
        lastValidBlockHeight: bundle.lastValidBlockHeight,
      },
      resumed: attempt > 1,
    });
    const landed: Signature[] = [];
    let stale: unknown;
    for (const [index, { base64 }] of bundle.txs.entries()) {
      try {
        landed.push(await send(bundle, base64));
      } catch (error) {
        const reason = staleReason(error);
        if (reason === undefined) throw error;
        stale = error;
        await progress({ kind: 'stale', index, reason, error });
        break;
      }
      await progress({ kind: 'confirmed', index, count: bundle.txs.length, signature: landed.at(-1)! });
    }
    // Reported before preparing again: a new bundle replaces this one, and its signatures with it.
    const transfer =
      landed.length > 0
        ? await operations.report(transferId, landed)
        : await client.getTransfer(transferId, call);
    reported.push(...landed);
    await progress({ kind: 'reported', transfer });
    if (operations.done(transfer)) return { transfer, signatures: reported };
    if (attempt >= maxBundles) {
      throw new Error(
        `transfer ${transferId}: the ${kind} is not finished after ${attempt} bundles (phase ${transfer.phase})`,
        { cause: stale },
      );
    }
  }
}

/**
 * Rescues a transfer whose route cannot finish (phase `failed` or `recoverable`, or `executing`
 * past its deadline): everything the route holds goes back to the source. Prepares the rescue
 * bundle, signs each transaction with the source's `signer` (the keeper's sweep is signed by the
 * service), sends them in order, and reports their signatures; prepares again when a blockhash
 * expired or the route changed meanwhile. Resolves once the transfer is `rescued` (status
 * `refunded`); run again after an interruption, it finishes what is left.
 */
export function rescue(client: RecoveryClient, options: RecoveryOptions): Promise<RecoveryResult> {
  return recover(client, 'rescue', options);
}

/**
 * Reclaims the rent of a route that ended (phase `settled`, or what reached a rescued route
 * since): every account the route still has closes and its rent, with the keeper's leftover, goes
 * back to the source. Works as {@link rescue} does; resolves once nothing is left to reclaim
 * (a settled transfer is then `reclaimed`).
 */
export function reclaimRent(client: RecoveryClient, options: RecoveryOptions): Promise<RecoveryResult> {
  return recover(client, 'reclaim', options);
}
