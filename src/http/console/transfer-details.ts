import type { Address, Signature } from '@solana/kit';
import type { AccountReader, ClockReader, TransactionReader } from '../../chain/types.ts';
import type { Clock } from '../../domain/clock.ts';
import type { Owner } from '../../domain/integration.ts';
import type { RouteSchedule } from '../../domain/route.ts';
import { type TransferView, transferView } from '../../domain/transfer-view.ts';
import type { Cluster } from '../../platform/platform.ts';
import type { DeliveryStore, ListedEvent } from '../../store/deliveries.ts';
import type { TransferStore } from '../../store/transfers.ts';
import { dependencyDeadline } from '../../use-cases/deadline.ts';
import { withCurrentRecoveryOrStored } from '../../use-cases/recovery.ts';
import { type NextStep, nextStep } from './next-step.ts';
import { eventLabel, explorerUrl } from './present.ts';

/** One hop of a route: when it is due and, once it landed, when, how late and in which transaction. */
export interface HopLine {
  /** 1 for the first hop. */
  number: number;
  /** Its due time by the chain's clock, once the route's schedule is known. */
  dueAt: Date | null;
  state: 'landed' | 'next' | 'waiting';
  signature: string | null;
  explorer: string | null;
  /** The time of the block it landed in (the chain's clock), when the chain answers. */
  landedAt: Date | null;
  /** `landedAt` minus `dueAt`, in seconds. */
  lateSeconds: number | null;
}

/** One event of the transfer's timeline, as webhooks deliver it. */
export interface TimelineEntry {
  sequence: number | null;
  type: string;
  label: string;
  at: Date;
  status: string | null;
  phase: string | null;
  delivery: string;
}

/** Everything a transfer's page shows. */
export interface TransferDetails {
  /** The transfer as `GET /api/v1/transfers/{id}` answers it, recovery figures read now. */
  transfer: TransferView;
  routeAddress: string | null;
  hops: HopLine[];
  timeline: TimelineEntry[];
  /** Events of the transfer the timeline leaves out (it shows the latest {@link TIMELINE_LIMIT}). */
  timelineOmitted: number;
  next: NextStep;
}

/** The most events a timeline shows (the events listing's largest page). */
const TIMELINE_LIMIT = 100;
/** Landing times remembered: a landed hop's block time never changes. */
const MAX_REMEMBERED_LANDINGS = 10_000;

/** The chain reads a transfer's page makes: its recovery figures and its hops' blocks. */
export type DetailsChain = AccountReader & ClockReader & TransactionReader;

/**
 * Reads what a transfer's page shows, through the same store functions and use cases as the API:
 * the transfer (`transfers.get`, recovery figures as `GET /transfers/{id}` reads them), its
 * events (`deliveries.listEvents`, as `GET /events?transferId=` lists them) and, from the chain,
 * the time each landed hop's block has.
 */
export function createTransferDetails(deps: {
  transfers: Pick<TransferStore, 'get'>;
  deliveries: Pick<DeliveryStore, 'listEvents'>;
  chain: DetailsChain;
  programAddress: Address;
  cluster: Cluster;
  clock: Clock;
}) {
  const landings = new Map<string, Date>();

  /** The block times of these signatures, null where the chain does not answer. */
  async function landedAt(signatures: readonly string[], onChainFailure: (error: unknown) => void) {
    const signal = dependencyDeadline();
    return Promise.all(
      signatures.map(async (signature) => {
        const known = landings.get(signature);
        if (known) return known;
        try {
          const found = await deps.chain.getTransaction(signature as Signature, { signal });
          if (!found?.blockTime) return null;
          const at = new Date(Number(found.blockTime) * 1000);
          if (landings.size >= MAX_REMEMBERED_LANDINGS) landings.clear();
          landings.set(signature, at);
          return at;
        } catch (error) {
          onChainFailure(error);
          return null;
        }
      }),
    );
  }

  return {
    /** The owner's transfer's page, or null when the owner has no such transfer. */
    async read(
      owner: Owner,
      id: number,
      onChainFailure: (error: unknown) => void,
    ): Promise<TransferDetails | null> {
      const stored = await deps.transfers.get(owner, id);
      if (!stored) return null;
      const [transfer, events] = await Promise.all([
        withCurrentRecoveryOrStored(deps, stored, onChainFailure),
        deps.deliveries.listEvents(
          owner,
          { transferId: id },
          { limit: TIMELINE_LIMIT, offset: 0 },
          deps.clock.now(),
        ),
      ]);
      const view = transferView(transfer);
      const schedule = transfer.route?.schedule ?? null;
      const times = await landedAt(view.signatures.hops, onChainFailure);
      const hops = hopLines(view, schedule, times, deps.cluster);
      const next = hops.find((hop) => hop.state === 'next');
      return {
        transfer: view,
        routeAddress: transfer.route?.address ?? null,
        hops,
        timeline: events.items.map(timelineEntry).reverse(),
        timelineOmitted: events.total - events.items.length,
        next: nextStep(view, view.status === 'processing' ? (next?.dueAt ?? null) : null),
      };
    },
  };
}

export type TransferDetailsReader = ReturnType<typeof createTransferDetails>;

/** Step `index`'s due time on the schedule (the chain's unix seconds), as a date. */
function dueAt(schedule: RouteSchedule, index: number): Date {
  return new Date(Number(schedule.firstReleaseAt + BigInt(index * schedule.intervalSecs)) * 1000);
}

function hopLines(
  view: TransferView,
  schedule: RouteSchedule | null,
  landed: readonly (Date | null)[],
  cluster: Cluster,
): HopLine[] {
  const done = view.progress.hopsCompleted;
  return Array.from({ length: view.hops }, (_, index) => {
    const due = schedule ? dueAt(schedule, index) : null;
    const signature = view.signatures.hops[index] ?? null;
    const at = landed[index] ?? null;
    return {
      number: index + 1,
      dueAt: due,
      state: index < done ? 'landed' : index === done && view.status === 'processing' ? 'next' : 'waiting',
      signature,
      explorer: signature ? explorerUrl(cluster, signature) : null,
      landedAt: at,
      lateSeconds: at && due ? Math.round((at.getTime() - due.getTime()) / 1000) : null,
    };
  });
}

/** What an event's payload says the transfer was after it. */
function transferAfter(event: ListedEvent) {
  const data = event.payload.data as { transfer?: Partial<TransferView> } | undefined;
  return data?.transfer ?? {};
}

function timelineEntry(event: ListedEvent): TimelineEntry {
  const after = transferAfter(event);
  const type = String(event.payload.type);
  return {
    sequence: typeof event.payload.sequence === 'number' ? event.payload.sequence : null,
    type,
    label: eventLabel(type, {
      ...(after.progress
        ? { hopsCompleted: after.progress.hopsCompleted, hops: after.progress.hopsTotal }
        : {}),
      ...(after.phase ? { phase: after.phase } : {}),
    }),
    at: new Date(String(event.payload.createdAt)),
    status: after.status ?? null,
    phase: after.phase ?? null,
    delivery: deliveryText(event),
  };
}

/** The state of an event's webhook deliveries, in words. */
function deliveryText(event: ListedEvent): string {
  const { deliveries } = event;
  if (deliveries.length === 0) return 'no webhook endpoint';
  const count = (status: string) => deliveries.filter((delivery) => delivery.status === status).length;
  const parts = [
    ['delivered', count('succeeded')],
    ['pending', count('pending')],
    ['failed', count('failed')],
  ]
    .filter(([, n]) => Number(n) > 0)
    .map(([word, n]) => `${n} ${word}`);
  return parts.join(', ');
}
