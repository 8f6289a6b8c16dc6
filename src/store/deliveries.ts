import type { Owner } from '../domain/integration.ts';
import { claimDueDeliveries, type DueDeliveriesClaim } from './claims/due-deliveries.ts';
import type { Db } from './db.ts';
import {
  type AttemptFilters,
  type AttemptRecord,
  type DeliveryResult,
  listAttempts,
  recordAttempts,
  recordTestAttempt,
} from './deliveries/attempts.ts';
import { type EventFilters, listEvents, resend } from './deliveries/event-deliveries.ts';
import { createSigningSecrets, sendingTarget } from './deliveries/signing.ts';
import type { SecretBox } from './secret-box.ts';

export type { ClaimedDelivery } from './claims/due-deliveries.ts';
export type {
  AttemptRecord,
  AttemptTrigger,
  DeliveryResult,
  LoggedAttempt,
} from './deliveries/attempts.ts';
export {
  type DeliveryStatus,
  type DeliveryTrigger,
  EVENT_WINDOW_MS,
  type EventDelivery,
  type EventFilters,
  type ListedEvent,
  type ResendRefusal,
} from './deliveries/event-deliveries.ts';
export type { SendingTarget } from './deliveries/signing.ts';

/**
 * Deliveries of events to webhook endpoints: claiming, recording attempts, and the tools' queries
 * (src/store/deliveries/ holds each part, src/store/claims/due-deliveries.ts the claim).
 */
export function createDeliveryStore(db: Db, secrets: SecretBox) {
  const signingSecrets = createSigningSecrets(secrets);
  return {
    claim: (input: DueDeliveriesClaim) => claimDueDeliveries(db, signingSecrets, input),
    record: (results: readonly DeliveryResult[]) => recordAttempts(db, results),
    recordTestAttempt: (attempt: Omit<AttemptRecord, 'trigger' | 'attempt'>) =>
      recordTestAttempt(db, attempt),
    sendingTarget: (owner: Owner, endpointId: number, now: Date) =>
      sendingTarget(db, signingSecrets, owner, endpointId, now),
    listAttempts: (
      owner: Owner,
      endpointId: number,
      filters: AttemptFilters,
      page: { limit: number; offset: number },
    ) => listAttempts(db, owner, endpointId, filters, page),
    listEvents: (owner: Owner, filters: EventFilters, page: { limit: number; offset: number }, now: Date) =>
      listEvents(db, owner, filters, page, now),
    resend: (owner: Owner, eventId: string, endpointId: number | undefined, now: Date) =>
      resend(db, owner, eventId, endpointId, now),
  };
}

export type DeliveryStore = ReturnType<typeof createDeliveryStore>;
