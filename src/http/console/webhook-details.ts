import type { Clock } from '../../domain/clock.ts';
import type { Owner } from '../../domain/integration.ts';
import type { DeliveryStore, EventDelivery, ListedEvent, LoggedAttempt } from '../../store/deliveries.ts';
import type { WebhookEndpoint, WebhookStore } from '../../store/webhooks.ts';

/** Deliveries a page of the log shows. */
const DELIVERIES_PER_PAGE = 10;
/** The most attempts a page of the log shows, over its deliveries (the API's largest page). */
const ATTEMPTS_SHOWN = 100;
/** The latest test sends shown. */
const TEST_SENDS_SHOWN = 5;

/** One event sent to the endpoint: its delivery's state and the attempts made. */
export interface DeliveryLine {
  eventId: string;
  eventType: string;
  transferId: number | null;
  createdAt: Date;
  /** Its state now (null only if the delivery was removed as the page was read). */
  delivery: EventDelivery | null;
  /** Its attempts, newest first (each round: the event's own, and every resend). */
  attempts: LoggedAttempt[];
}

/** Everything an endpoint's page shows. */
export interface WebhookDetails {
  endpoint: WebhookEndpoint;
  deliveries: DeliveryLine[];
  /** Events sent to the endpoint in the last 30 days. */
  deliveryTotal: number;
  /** Attempts of this page's deliveries left out (the page shows the latest {@link ATTEMPTS_SHOWN}). */
  attemptsOmitted: number;
  testSends: LoggedAttempt[];
  page: number;
  pages: number;
}

/**
 * Reads an endpoint's page through the store functions the API reads with: the endpoint
 * (`GET /webhooks`), the events sent to it with their delivery state (`GET /events?endpointId=`)
 * and the attempts of those events and its test sends (`GET /webhooks/{id}/deliveries`).
 */
export function createWebhookDetails(deps: {
  webhooks: Pick<WebhookStore, 'get'>;
  deliveries: Pick<DeliveryStore, 'listEvents' | 'listAttempts'>;
  clock: Clock;
}) {
  return {
    /** Page `page` (from 1) of the owner's endpoint's log, or null when the owner has no such endpoint. */
    async read(owner: Owner, endpointId: number, page: number): Promise<WebhookDetails | null> {
      const endpoint = await deps.webhooks.get(owner, endpointId);
      if (!endpoint) return null;
      const events = await deps.deliveries.listEvents(
        owner,
        { endpointId },
        { limit: DELIVERIES_PER_PAGE, offset: (page - 1) * DELIVERIES_PER_PAGE },
        deps.clock.now(),
      );
      const eventIds = events.items.map((event) => event.id);
      const [attempts, tests] = await Promise.all([
        eventIds.length === 0
          ? { items: [], total: 0 }
          : deps.deliveries.listAttempts(
              owner,
              endpointId,
              { eventIds },
              { limit: ATTEMPTS_SHOWN, offset: 0 },
            ),
        deps.deliveries.listAttempts(
          owner,
          endpointId,
          { trigger: 'test' },
          { limit: TEST_SENDS_SHOWN, offset: 0 },
        ),
      ]);
      // Deleted as it was read.
      if (!attempts || !tests) return null;
      return {
        endpoint,
        deliveries: events.items.map((event) => deliveryLine(event, endpointId, attempts.items)),
        deliveryTotal: events.total,
        attemptsOmitted: attempts.total - attempts.items.length,
        testSends: tests.items,
        page,
        pages: Math.max(1, Math.ceil(events.total / DELIVERIES_PER_PAGE)),
      };
    },
  };
}

export type WebhookDetailsReader = ReturnType<typeof createWebhookDetails>;

function deliveryLine(
  event: ListedEvent,
  endpointId: number,
  attempts: readonly LoggedAttempt[],
): DeliveryLine {
  const transfer = (event.payload.data as { transfer?: { id?: unknown } } | undefined)?.transfer;
  return {
    eventId: event.id,
    eventType: String(event.payload.type),
    transferId: typeof transfer?.id === 'number' ? transfer.id : null,
    createdAt: new Date(String(event.payload.createdAt)),
    delivery: event.deliveries.find((delivery) => delivery.endpointId === endpointId) ?? null,
    attempts: attempts.filter((attempt) => attempt.eventId === event.id),
  };
}
