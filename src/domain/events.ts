import { randomBytes } from 'node:crypto';
import type { EventType, Transfer } from './transfer.ts';
import { transferView } from './transfer-view.ts';

/** The API version stamped on every event. */
export const EVENT_API_VERSION = 'v1';

/** A fresh event id: `evt_` and 24 url-safe random characters. */
export function newEventId(): string {
  return `evt_${randomBytes(18).toString('base64url')}`;
}

/**
 * The event as delivered to webhook endpoints: the transfer as `GET /transfers/{id}` shows it at
 * that moment, and the transfer's event `sequence` (1, 2, 3, ...) so a receiver can spot a gap.
 */
export function transferEventPayload(input: {
  id: string;
  type: EventType;
  transfer: Transfer;
  sequence: number;
  createdAt: Date;
}) {
  return {
    id: input.id,
    type: input.type,
    createdAt: input.createdAt.toISOString(),
    isTest: input.transfer.mode === 'test',
    apiVersion: EVENT_API_VERSION,
    sequence: input.sequence,
    data: { transfer: transferView(input.transfer) },
  };
}

export type TransferEventPayload = ReturnType<typeof transferEventPayload>;

/** A `ping` event: what registration and the test tool send to an endpoint, signed like any event. */
export function pingEvent(input: { url: string; isTest: boolean; createdAt: Date }) {
  const id = newEventId();
  const body = JSON.stringify({
    id,
    type: 'ping',
    createdAt: input.createdAt.toISOString(),
    isTest: input.isTest,
    apiVersion: EVENT_API_VERSION,
    data: { url: input.url },
  });
  return { id, type: 'ping' as const, body };
}
