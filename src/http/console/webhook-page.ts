import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Clock } from '../../domain/clock.ts';
import type { LoggedAttempt } from '../../store/deliveries.ts';
import { DEFAULT_SECRET_OVERLAP_SECONDS } from '../../use-cases/webhook-endpoints.ts';
import { errorPage } from './errors.ts';
import { formField, pageNumber } from './form.ts';
import { pageData } from './layout.ts';
import { contentVersion, isRefresh, isUnchanged } from './live.ts';
import { deliveryLabel, duration, outcomeTone, utc } from './present.ts';
import type { ShownOnceForm, ShownOnceForms } from './shown-once.ts';
import type { WebhookDetails, WebhookDetailsReader } from './webhook-details.ts';

const params = z.object({ endpointId: z.string().regex(/^[1-9]\d{0,14}$/) });

/** The endpoint id of a request's path, or null when it cannot be one. */
export function endpointIdOf(request: FastifyRequest): number | null {
  const parsed = params.safeParse(request.params);
  return parsed.success ? Number(parsed.data.endpointId) : null;
}

/** How long the replaced secret may keep signing after a rotation, as the form offers it. */
export const OVERLAP_CHOICES = [
  { seconds: 0, label: 'No overlap: the old secret stops at once' },
  { seconds: 3600, label: '1 hour' },
  { seconds: DEFAULT_SECRET_OVERLAP_SECONDS, label: '24 hours' },
  { seconds: 7 * 24 * 3600, label: '7 days' },
] as const;

/** An endpoint's "rotate the signing secret" form: the new secret is shown once, so it rotates once. */
export function rotateSecretForm(endpointId: number): ShownOnceForm {
  const page = `/dashboard/webhooks/${endpointId}`;
  return {
    action: `${page}/rotate-secret`,
    repeated: {
      title: 'The new secret was already shown',
      message:
        'This form already rotated the signing secret, and the new secret was shown once on the page that answered it. It cannot be shown again, and the secret was not rotated again. If it was not copied, rotate it again.',
    },
    back: { href: page, label: `Back to webhook endpoint ${endpointId}` },
  };
}

/** What the endpoint's page needs: its details, the clock, and its forms' one-time tokens. */
export interface WebhookPageDeps {
  details: WebhookDetailsReader;
  clock: Clock;
  shownOnce: Pick<ShownOnceForms, 'field'>;
}

/** What an action done on the page says when the page shows again (`?done=`). */
const NOTICES: Record<string, string> = {
  enabled: 'The endpoint is enabled. Deliveries still pending to it are tried again now.',
  tested: 'A test event was sent: its answer is the first of the test sends below.',
  resent: 'The event is queued for delivery again; its attempts show below as they are made.',
};

/** A duration in milliseconds as the log shows it: `12 ms`, `2.4 s`. */
function millis(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** One attempt as the log shows it. */
function attemptLine(attempt: LoggedAttempt) {
  return {
    id: attempt.id,
    number: attempt.attempt,
    trigger: attempt.trigger,
    at: utc(attempt.attemptedAt),
    atIso: attempt.attemptedAt.toISOString(),
    result: attempt.statusCode === null ? 'no response' : `HTTP ${attempt.statusCode}`,
    tone: attempt.succeeded ? 'good' : 'bad',
    outcome: attempt.succeeded ? 'delivered' : 'failed',
    took: millis(attempt.durationMs),
    excerpt: attempt.responseExcerpt,
    error: attempt.error,
  };
}

/** The page's figures, formatted: what a template only prints. */
function present(details: WebhookDetails, now: Date) {
  const { endpoint } = details;
  const overlapUntil = endpoint.previousSecretExpiresAt;
  return {
    endpoint: {
      id: endpoint.id,
      url: endpoint.url,
      isActive: endpoint.isActive,
      disabled: endpoint.disabledAt ? utc(endpoint.disabledAt) : null,
      events: endpoint.events,
      created: utc(endpoint.createdAt),
      overlapUntil: overlapUntil && overlapUntil > now ? utc(overlapUntil) : null,
    },
    deliveries: details.deliveries.map((line) => ({
      eventId: line.eventId,
      eventType: line.eventType,
      transferId: line.transferId,
      created: utc(line.createdAt),
      status: line.delivery ? deliveryLabel(line.delivery.status) : 'removed',
      tone: line.delivery ? outcomeTone(line.delivery.status) : 'quiet',
      pending: line.delivery?.status === 'pending',
      round: line.delivery?.attempts ?? 0,
      resent: line.delivery?.trigger === 'resend',
      next: line.delivery?.nextAttemptAt
        ? `${utc(line.delivery.nextAttemptAt)}${line.delivery.nextAttemptAt > now ? ` (in ${duration((line.delivery.nextAttemptAt.getTime() - now.getTime()) / 1000)})` : ''}`
        : null,
      attempts: line.attempts.map(attemptLine),
    })),
    deliveryTotal: details.deliveryTotal,
    attemptsOmitted: details.attemptsOmitted,
    testSends: details.testSends.map(attemptLine),
    page: details.page,
    previous: details.page > 1 ? details.page - 1 : null,
    next: details.page < details.pages ? details.page + 1 : null,
  };
}

/** What an action adds to the page it answers with: a secret shown once, a notice or an error. */
export interface PageExtras {
  status?: number;
  secret?: { value: string; rotated: boolean };
  notice?: string;
  error?: string;
}

/**
 * Answers with an endpoint's page (or, for htmx, its live delivery log alone): its state, the
 * actions on it and the log of what was sent to it. While a delivery is pending the log
 * refreshes every 2 s. Another integration's or mode's endpoint is as unknown as a missing one.
 */
export async function showWebhook(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: WebhookPageDeps,
  endpointId: number | null,
  extras: PageExtras = {},
) {
  const caller = request.consoleCaller;
  const page = pageNumber(request.query);
  const details = endpointId === null ? null : await deps.details.read(caller.auth.owner, endpointId, page);
  if (!details) {
    return errorPage(request, reply, 404, {
      title: 'Webhook endpoint not found',
      message: `There is no webhook endpoint${endpointId === null ? ' at this address' : ` with id ${endpointId}`} in this integration's ${caller.auth.mode} data.`,
    });
  }
  const shown = present(details, deps.clock.now());
  const live = shown.deliveries.some((delivery) => delivery.pending);
  const version = contentVersion({ ...shown, live });
  reply.header('vary', 'hx-request').header('cache-control', 'no-store');
  if (isUnchanged(request, version)) return reply.code(204).send();
  const path = `/dashboard/webhooks/${details.endpoint.id}`;
  const data = {
    title: `Webhook endpoint ${details.endpoint.id}`,
    ...shown,
    live,
    path,
    refreshUrl: `${path}?${new URLSearchParams({ page: String(page), v: version })}`,
    overlapChoices: OVERLAP_CHOICES.map((choice) => ({
      ...choice,
      selected: choice.seconds === DEFAULT_SECRET_OVERLAP_SECONDS,
    })),
    rotateToken: deps.shownOnce.field(request, rotateSecretForm(details.endpoint.id).action),
    ...extras,
  };
  if (isRefresh(request)) return reply.view('webhook-deliveries', data);
  return reply.code(extras.status ?? 200).view('webhook', pageData(caller, data, 'webhooks'));
}

/**
 * `GET /dashboard/webhooks/{id}`: an endpoint's page, with `?page=` for older deliveries and
 * `?done=` naming the action just done.
 */
export async function webhookPage(app: FastifyInstance, deps: WebhookPageDeps) {
  app.get('/webhooks/:endpointId', async (request, reply) => {
    const notice = NOTICES[formField(request.query, 'done')];
    return showWebhook(request, reply, deps, endpointIdOf(request), notice ? { notice } : {});
  });
}
