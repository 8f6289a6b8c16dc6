import type { Clock } from '../domain/clock.ts';
import { AppError } from '../domain/errors.ts';
import { pingEvent } from '../domain/events.ts';
import type { Owner } from '../domain/integration.ts';
import type { EventType } from '../domain/transfer.ts';
import { newWebhookSecret } from '../domain/webhook-signature.ts';
import type { DeliveryStore, EventDelivery, LoggedAttempt, ResendRefusal } from '../store/deliveries.ts';
import type { WebhookEndpoint, WebhookStore } from '../store/webhooks.ts';
import type { WebhookNetworkPolicy, WebhookSender } from '../webhooks/sender.ts';
import { webhookUrlProblem } from '../webhooks/sender.ts';
import { attemptOutcome, DELIVERY_TIMEOUT_MS, signedPost } from '../webhooks/signed-post.ts';

/*
 * What an integrator does with its webhook endpoints, as the API and the console both do it:
 * register one (after a signed ping it answers), rotate its secret, re-enable it, send it a test
 * event, and send an event again.
 */

/** At most this many endpoints per integration and mode. */
export const MAX_WEBHOOK_ENDPOINTS = 10;
/** How long the reachability ping waits for any HTTP response (decisions: 5 s). */
export const PING_TIMEOUT_MS = 5_000;
/** How long a replaced secret keeps signing unless the caller says otherwise. */
export const DEFAULT_SECRET_OVERLAP_SECONDS = 24 * 3600;
/** The longest overlap a rotation may ask for. */
export const MAX_SECRET_OVERLAP_SECONDS = 7 * 24 * 3600;

/** Who acts: the owner of the endpoints, and whether it is test data (pings say so). */
export interface WebhookCaller {
  owner: Owner;
  isTest: boolean;
}

/** What registering an endpoint needs. */
export interface RegisterDeps {
  webhooks: Pick<WebhookStore, 'count' | 'create'>;
  sender: Pick<WebhookSender, 'post'>;
  policy: WebhookNetworkPolicy;
  clock: Clock;
  pingTimeoutMs?: number;
}

/**
 * Registers an endpoint once it answers a signed ping: MH_050 for a URL the network policy refuses
 * or that gives no HTTP response in time, MH_051 at {@link MAX_WEBHOOK_ENDPOINTS}. `events` null
 * subscribes to every type, later ones included. Answers the endpoint and its secret, which is
 * never read back afterwards.
 */
export async function registerWebhookEndpoint(
  deps: RegisterDeps,
  caller: WebhookCaller,
  input: { url: string; events: readonly EventType[] | null },
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const { owner } = caller;
  const { url } = input;
  const problem = webhookUrlProblem(url, deps.policy);
  if (problem) throw new AppError('MH_050', `Webhook URL not allowed: ${problem}.`, { param: 'url' });
  if ((await deps.webhooks.count(owner)) >= MAX_WEBHOOK_ENDPOINTS) throw limitReached();

  const secret = newWebhookSecret();
  const now = deps.clock.now();
  const ping = pingEvent({ url, isTest: caller.isTest, createdAt: now });
  const result = await signedPost(deps.sender, {
    url,
    secrets: [secret],
    eventId: ping.id,
    eventType: ping.type,
    body: ping.body,
    now,
    timeoutMs: deps.pingTimeoutMs ?? PING_TIMEOUT_MS,
  });
  if (result.kind === 'failed') {
    throw new AppError('MH_050', `Webhook URL unreachable: ${result.error}.`, { param: 'url' });
  }
  const events = input.events ? [...new Set(input.events)] : null;
  const created = await deps.webhooks.create(owner, { url, events, secret, now }, MAX_WEBHOOK_ENDPOINTS);
  if (created === 'limit_reached') throw limitReached();
  return { endpoint: created, secret };
}

/**
 * Replaces an endpoint's secret; the replaced one keeps signing (as a second `v1`) for
 * `overlapSeconds`. Answers the endpoint and the new secret, shown only this once.
 */
export async function rotateWebhookSecret(
  deps: { webhooks: Pick<WebhookStore, 'rotateSecret'>; clock: Clock },
  owner: Owner,
  endpointId: number,
  overlapSeconds: number = DEFAULT_SECRET_OVERLAP_SECONDS,
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const secret = newWebhookSecret();
  const endpoint = await deps.webhooks.rotateSecret(owner, endpointId, {
    secret,
    overlapMs: overlapSeconds * 1000,
    now: deps.clock.now(),
  });
  if (!endpoint) throw endpointNotFound(endpointId);
  return { endpoint, secret };
}

/** Re-activates an endpoint (its pending deliveries are tried again at once). */
export async function enableWebhookEndpoint(
  deps: { webhooks: Pick<WebhookStore, 'enable'>; clock: Clock },
  owner: Owner,
  endpointId: number,
): Promise<WebhookEndpoint> {
  const endpoint = await deps.webhooks.enable(owner, endpointId, deps.clock.now());
  if (!endpoint) throw endpointNotFound(endpointId);
  return endpoint;
}

/** POSTs a signed `ping` to an endpoint, active or disabled, now; logs and answers the attempt. */
export async function sendTestEvent(
  deps: {
    deliveries: Pick<DeliveryStore, 'sendingTarget' | 'recordTestAttempt'>;
    sender: Pick<WebhookSender, 'post'>;
    clock: Clock;
  },
  caller: WebhookCaller,
  endpointId: number,
): Promise<LoggedAttempt> {
  const now = deps.clock.now();
  const target = await deps.deliveries.sendingTarget(caller.owner, endpointId, now);
  if (!target) throw endpointNotFound(endpointId);
  const ping = pingEvent({ url: target.url, isTest: caller.isTest, createdAt: now });
  const result = await signedPost(deps.sender, {
    url: target.url,
    secrets: target.secrets,
    eventId: ping.id,
    eventType: ping.type,
    body: ping.body,
    now,
    timeoutMs: DELIVERY_TIMEOUT_MS,
  });
  return deps.deliveries.recordTestAttempt({
    endpointId,
    eventId: ping.id,
    eventType: 'ping',
    attemptedAt: now,
    ...attemptOutcome(result),
  });
}

/** The form of an event's id (`evt_...`), as the API's path parameter takes it. */
const EVENT_ID = /^evt_[A-Za-z0-9_-]{1,60}$/;

/**
 * Queues an event of the last 30 days for delivery again now, with a fresh retry window: to one
 * endpoint (subscribed or not), or without one to every active endpoint subscribed to its type.
 */
export async function resendEvent(
  deps: { deliveries: Pick<DeliveryStore, 'resend'>; clock: Clock },
  owner: Owner,
  eventId: string,
  endpointId: number | undefined,
): Promise<EventDelivery[]> {
  // An id no event can have (a form posts any text) is no event of the caller's.
  if (!EVENT_ID.test(eventId)) throw resendRefused('event_not_found', eventId, endpointId);
  const outcome = await deps.deliveries.resend(owner, eventId, endpointId, deps.clock.now());
  if ('refused' in outcome) throw resendRefused(outcome.refused, eventId, endpointId);
  return outcome.deliveries;
}

/** An endpoint id that is not one of the caller's endpoints (404, like an unknown route). */
export function endpointNotFound(endpointId: number, param = 'endpointId') {
  return new AppError('MH_016', `No webhook endpoint with id ${endpointId}.`, { status: 404, param });
}

/** An event id that is not one of the caller's events of the last 30 days. */
export function eventNotFound(eventId: string) {
  return new AppError('MH_016', `No event with id ${eventId} in the last 30 days.`, {
    status: 404,
    param: 'eventId',
  });
}

function limitReached() {
  return new AppError(
    'MH_051',
    `Maximum of ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints reached. Delete one before adding another.`,
  );
}

/** The error answering a refused resend. */
function resendRefused(refusal: ResendRefusal, eventId: string, endpointId: number | undefined): AppError {
  switch (refusal) {
    case 'event_not_found':
      return eventNotFound(eventId);
    case 'endpoint_not_found':
      return endpointNotFound(endpointId ?? 0);
    case 'endpoint_disabled':
      return new AppError(
        'MH_016',
        `Webhook endpoint ${endpointId} is disabled. Enable it first (POST /webhooks/${endpointId}/enable).`,
        { param: 'endpointId' },
      );
    case 'no_endpoint':
      return new AppError(
        'MH_016',
        'None of your active webhook endpoints is subscribed to this event type. Pass `endpointId` to send it to one anyway.',
      );
  }
}
