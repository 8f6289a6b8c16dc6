import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isAppError } from '../../domain/errors.ts';
import { EVENT_TYPES, type EventType } from '../../domain/transfer.ts';
import type { WebhookStore } from '../../store/webhooks.ts';
import {
  MAX_WEBHOOK_ENDPOINTS,
  type RegisterDeps,
  registerWebhookEndpoint,
} from '../../use-cases/webhook-endpoints.ts';
import { formField, formFields } from './form.ts';
import { pageData } from './layout.ts';
import { eventMeaning, utc } from './present.ts';
import type { ShownOnceForm, ShownOnceForms } from './shown-once.ts';
import { showWebhook, type WebhookPageDeps } from './webhook-page.ts';

/** What the register form holds: the URL and the event types, all of them or those chosen. */
interface RegisterForm {
  url: string;
  scope: 'all' | 'some';
  events: readonly string[];
}

const EMPTY_FORM: RegisterForm = { url: '', scope: 'all', events: [] };

/** The register form: the new endpoint's secret is shown once, so it registers one endpoint at most. */
const REGISTER: ShownOnceForm = {
  action: '/dashboard/webhooks',
  repeated: {
    title: 'The signing secret was already shown',
    message:
      'This form already registered the endpoint, and its signing secret was shown once on the page that answered it. It cannot be shown again, and no other endpoint was registered. If it was not copied, rotate the secret on the endpoint’s page.',
  },
  back: { href: '/dashboard/webhooks', label: 'Back to webhooks' },
};

const isEventType = (value: string): value is EventType => (EVENT_TYPES as readonly string[]).includes(value);

/** Why the form cannot be sent on as it is, or null. */
function formProblem(form: RegisterForm): string | null {
  if (form.url === '') return 'Enter the URL the events are sent to.';
  if (form.scope === 'some' && form.events.length === 0)
    return 'Choose at least one event type, or all of them.';
  if (!form.events.every(isEventType)) return 'Choose event types from the list.';
  return null;
}

/**
 * `GET /dashboard/webhooks`: the endpoints of the signed-in key's integration and mode, and the
 * form registering another; `POST /dashboard/webhooks` registers it as `POST /webhooks` does
 * (after a signed ping the URL answers) and answers with the new endpoint's page, which shows
 * its signing secret this once (the form registers one endpoint, however often it is sent).
 */
export async function webhookListPage(
  app: FastifyInstance,
  deps: RegisterDeps &
    WebhookPageDeps & {
      webhooks: Pick<WebhookStore, 'list' | 'count' | 'create'>;
      shownOnce: ShownOnceForms;
    },
) {
  async function show(
    request: FastifyRequest,
    reply: FastifyReply,
    input: { status: number; form: RegisterForm; error?: string; notice?: string },
  ) {
    const caller = request.consoleCaller;
    const endpoints = await deps.webhooks.list(caller.auth.owner);
    const chosen = new Set(input.form.events);
    const data = {
      title: 'Webhooks',
      endpoints: endpoints.map((endpoint) => ({
        id: endpoint.id,
        href: `/dashboard/webhooks/${endpoint.id}`,
        url: endpoint.url,
        isActive: endpoint.isActive,
        events: endpoint.events === null ? 'All event types' : endpoint.events.join(', '),
        created: utc(endpoint.createdAt),
      })),
      max: MAX_WEBHOOK_ENDPOINTS,
      full: endpoints.length >= MAX_WEBHOOK_ENDPOINTS,
      form: {
        url: input.form.url,
        all: input.form.scope === 'all',
        eventTypes: EVENT_TYPES.map((type) => ({
          type,
          meaning: eventMeaning(type),
          checked: chosen.has(type),
        })),
      },
      error: input.error,
      notice: input.notice,
      registerToken: deps.shownOnce.field(request, REGISTER.action),
    };
    reply.header('cache-control', 'no-store');
    return reply.code(input.status).view('webhooks', pageData(caller, data, 'webhooks'));
  }

  app.get('/webhooks', async (request, reply) => {
    const deleted = formField(request.query, 'deleted');
    const notice = /^\d{1,16}$/.test(deleted)
      ? `Webhook endpoint ${deleted} was deleted: nothing more is sent to it.`
      : undefined;
    return show(request, reply, { status: 200, form: EMPTY_FORM, ...(notice ? { notice } : {}) });
  });

  app.post('/webhooks', async (request, reply) => {
    const form: RegisterForm = {
      url: formField(request.body, 'url').trim(),
      scope: formField(request.body, 'scope') === 'some' ? 'some' : 'all',
      events: formFields(request.body, 'events'),
    };
    const problem = formProblem(form);
    if (problem) return show(request, reply, { status: 400, form, error: problem });
    const { owner, isTest } = request.consoleCaller.auth;
    try {
      return await deps.shownOnce.send(request, reply, REGISTER, async () => {
        const created = await registerWebhookEndpoint(
          deps,
          { owner, isTest },
          { url: form.url, events: form.scope === 'all' ? null : form.events.filter(isEventType) },
        );
        return showWebhook(request, reply, deps, created.endpoint.id, {
          secret: { value: created.secret, rotated: false },
        });
      });
    } catch (error) {
      if (!isAppError(error)) throw error;
      return show(request, reply, { status: error.status, form, error: error.message });
    }
  });
}
