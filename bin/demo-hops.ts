import type { Transfer, TransferRouterClient } from '../clients/typescript/src/index.ts';
import { blockTimeOf, type DemoRpc, type RouteSchedule } from './demo-chain.ts';

/** A hop that landed, and how long after its due time. */
export interface HopLanding {
  /** 1 for the first hop. */
  hop: number;
  signature: string;
  /** Its block's timestamp minus its due time: whole seconds of the chain's clock. */
  chainLateSeconds: number;
  /**
   * From the moment the demo saw the chain's clock reach the due time to the moment the service
   * recorded the hop confirmed (its `transfer.hop_complete` event), in wall milliseconds.
   */
  wallLateMs: number;
}

/** The middle and the largest lateness of the landed hops, by each clock. */
export interface LatenessSummary {
  hops: number;
  chainSeconds: { p50: number; max: number };
  wallMs: { p50: number; max: number };
}

/** The median (the lower one of an even count) and the largest of `values`. */
function p50AndMax(values: readonly number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: sorted[Math.ceil(sorted.length / 2) - 1]!, max: sorted.at(-1)! };
}

/**
 * Follows a route's hops as they land. The demo shows it the chain's clock as it reads it, which
 * says when each hop fell due in wall time; each landed hop's confirmation is the moment the
 * service recorded it, and its block's timestamp is when it landed by the chain's clock.
 */
export function createHopLog(deps: {
  rpc: DemoRpc;
  client: Pick<TransferRouterClient, 'listEvents'>;
  transferId: number;
  hops: number;
  schedule: RouteSchedule;
}) {
  const { rpc, client, transferId, schedule } = deps;
  const dueSeenAt: number[] = [];
  const landings: HopLanding[] = [];

  return {
    /** The chain's clock read `chainSeconds` at wall time `wallMs`. */
    sawClock(chainSeconds: bigint, wallMs: number) {
      for (let step = dueSeenAt.length; step < deps.hops && schedule.dueAt(step) <= chainSeconds; step++) {
        dueSeenAt.push(wallMs);
      }
    },

    /**
     * The hops `transfer` shows landed that were not answered before, in order. One whose due time
     * the clock has not been seen at yet (the transfer was read after the clock) waits for the next
     * call.
     */
    async landedSince(transfer: Transfer): Promise<HopLanding[]> {
      const from = landings.length;
      const to = Math.min(transfer.progress.hopsCompleted, dueSeenAt.length);
      if (to <= from) return [];
      const { items } = await client.listEvents({ transferId, type: 'transfer.hop_complete', limit: 100 });
      const recordedAt = new Map(
        items.map((event) => [event.data.transfer.progress.hopsCompleted - 1, Date.parse(event.createdAt)]),
      );
      for (let step = from; step < to; step++) {
        const signature = transfer.signatures.hops[step];
        const confirmedAt = recordedAt.get(step);
        if (signature === undefined || confirmedAt === undefined) {
          throw new Error(`hop ${step + 1} of transfer ${transferId} landed without its signature or event`);
        }
        landings.push({
          hop: step + 1,
          signature,
          chainLateSeconds: Number((await blockTimeOf(rpc, signature)) - schedule.dueAt(step)),
          wallLateMs: confirmedAt - dueSeenAt[step]!,
        });
      }
      return landings.slice(from);
    },

    /** p50 and max over the hops landed so far; undefined before the first. */
    summary(): LatenessSummary | undefined {
      if (landings.length === 0) return undefined;
      return {
        hops: landings.length,
        chainSeconds: p50AndMax(landings.map((landing) => landing.chainLateSeconds)),
        wallMs: p50AndMax(landings.map((landing) => landing.wallLateMs)),
      };
    },
  };
}
