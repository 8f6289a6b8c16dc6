import type { TransferView } from '../../domain/transfer-view.ts';
import { sol, utc } from './present.ts';

/** What the integrator does next about a transfer, in words. */
export interface NextStep {
  title: string;
  detail: string;
}

/**
 * The next step for a transfer as the API shows it (its `recovery` read from the chain now): what
 * the source wallet or the integrator does, or that nothing is needed. `nextHopDueAt` is when the
 * keeper runs the next hop, when one is pending.
 */
export function nextStep(transfer: TransferView, nextHopDueAt: Date | null): NextStep {
  const id = transfer.id;
  const recovery = transfer.recovery;
  switch (transfer.status) {
    case 'quote':
      return {
        title: 'Prepare the route',
        detail: `Call POST /api/v1/transfers/${id}/prepare and have the source wallet sign and broadcast the bundle before ${utc(new Date(transfer.expiresAt))}, when the quote expires.`,
      };
    case 'awaiting_signature':
      return {
        title: 'Sign, broadcast and confirm',
        detail: `The source wallet signs and broadcasts the prepared bundle in order; report the signatures with POST /api/v1/transfers/${id}/confirm-broadcast before ${utc(new Date(transfer.expiresAt))}. A lost bundle: prepare again, it resumes from what is on chain.`,
      };
    case 'processing': {
      const next = transfer.progress.hopsCompleted + 1;
      const when = nextHopDueAt ? ` Hop ${next} of ${transfer.hops} is due at ${utc(nextHopDueAt)}.` : '';
      return { title: 'Nothing to do', detail: `The keeper runs the hops on schedule.${when}` };
    }
    case 'completed':
      if (recovery?.canReclaimRent) {
        return {
          title: 'Reclaim the rent',
          detail: `The source can get ${sol(recovery.reclaimableLamports)} back: POST /api/v1/transfers/${id}/reclaim-rent/prepare, sign and broadcast, then reclaim-rent/confirm (the TypeScript client's reclaimRent does all three).`,
        };
      }
      return { title: 'Nothing to do', detail: 'The transfer is complete and nothing is left to reclaim.' };
    case 'failed':
      return {
        title: 'Rescue the funds',
        detail: recovery?.canRescue
          ? `The source wallet gets ${sol(recovery.rescuableLamports)} and the route's tokens back: POST /api/v1/transfers/${id}/rescue/prepare, sign and broadcast, then rescue/confirm (the TypeScript client's rescue does all three).`
          : `POST /api/v1/transfers/${id}/rescue/prepare answers what the source can rescue now.`,
      };
    case 'refunded':
      if (recovery?.canReclaimRent) {
        return {
          title: 'Reclaim what arrived since',
          detail: `${sol(recovery.reclaimableLamports)} reached the route's accounts after the rescue: reclaim it with POST /api/v1/transfers/${id}/reclaim-rent/prepare.`,
        };
      }
      return { title: 'Nothing to do', detail: 'The funds are back with the source.' };
    case 'expired':
      return {
        title: 'Nothing to do',
        detail: 'The quote expired before its route was deployed. Create a new transfer to try again.',
      };
  }
}
