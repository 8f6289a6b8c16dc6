import type { components } from './openapi.ts';

/**
 * The events webhook deliveries carry, and what hands them over once verified. Only types: a
 * browser follows a transfer through them as well as a server does, while verifying a delivery
 * (`@transfer-router/client/webhooks`) needs Node.
 */

/** A transfer event as delivered: the event of `GET /events` without its delivery report. */
export type TransferEvent = Omit<components['schemas']['Event'], 'deliverySuccess' | 'deliveries'>;

/** The `ping` sent when an endpoint is registered and by `POST /webhooks/{id}/test`. */
export interface PingEvent {
  id: string;
  type: 'ping';
  createdAt: string;
  isTest: boolean;
  apiVersion: 'v1';
  data: { url: string };
}

/** A delivered event: a transfer event, or a ping. */
export type WebhookEvent = TransferEvent | PingEvent;

/** Hands over verified events as they arrive, e.g. to `waitForTransfer`. */
export interface WebhookEventSource {
  /** Calls `listener` with every verified event from now on; answers the function that stops it. */
  subscribe(listener: (event: WebhookEvent) => void): () => void;
}
