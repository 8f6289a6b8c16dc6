import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isAppError } from '../../domain/errors.ts';
import type { DeliveryStore } from '../../store/deliveries.ts';
import type { WebhookStore } from '../../store/webhooks.ts';
import {
  enableWebhookEndpoint,
  resendEvent,
  rotateWebhookSecret,
  sendTestEvent,
} from '../../use-cases/webhook-endpoints.ts';
import type { WebhookSender } from '../../webhooks/sender.ts';
import { formField } from './form.ts';
import type { ShownOnceForms } from './shown-once.ts';
import {
  endpointIdOf,
  OVERLAP_CHOICES,
  rotateSecretForm,
  showWebhook,
  type WebhookPageDeps,
} from './webhook-page.ts';

/** What the actions on an endpoint need: the use cases' stores and sender, and the page they answer with. */
export interface WebhookActionDeps extends WebhookPageDeps {
  webhooks: Pick<WebhookStore, 'rotateSecret' | 'enable' | 'delete'>;
  deliveries: Pick<DeliveryStore, 'resend' | 'sendingTarget' | 'recordTestAttempt'>;
  sender: Pick<WebhookSender, 'post'>;
  shownOnce: ShownOnceForms;
}

/**
 * The actions on an endpoint, each a form of its page posting back here and calling the use case
 * the API's endpoint calls: `rotate-secret` (the new secret shown on the answer, once; the form
 * rotates once however often it is sent), `enable`, `test`, `resend` (one event, to this
 * endpoint) and `delete`. An action refused by its use case shows the page again with the reason.
 */
export async function webhookActions(app: FastifyInstance, deps: WebhookActionDeps) {
  const act = (run: EndpointAction) => endpointAction(deps, run);
  const backTo = (reply: FastifyReply, endpointId: number, done: string) =>
    reply.redirect(`/dashboard/webhooks/${endpointId}?done=${done}`, 303);

  app.post(
    '/webhooks/:endpointId/rotate-secret',
    act((request, reply, endpointId) => rotateSecret(deps, request, reply, endpointId)),
  );

  app.post(
    '/webhooks/:endpointId/enable',
    act(async (request, reply, endpointId) => {
      await enableWebhookEndpoint(deps, request.consoleCaller.auth.owner, endpointId);
      return backTo(reply, endpointId, 'enabled');
    }),
  );

  app.post(
    '/webhooks/:endpointId/test',
    act(async (request, reply, endpointId) => {
      const { owner, isTest } = request.consoleCaller.auth;
      await sendTestEvent(deps, { owner, isTest }, endpointId);
      return backTo(reply, endpointId, 'tested');
    }),
  );

  app.post(
    '/webhooks/:endpointId/resend',
    act(async (request, reply, endpointId) => {
      const eventId = formField(request.body, 'eventId');
      await resendEvent(deps, request.consoleCaller.auth.owner, eventId, endpointId);
      return backTo(reply, endpointId, 'resent');
    }),
  );

  app.post(
    '/webhooks/:endpointId/delete',
    act(async (request, reply, endpointId) => {
      if (formField(request.body, 'confirm') !== 'yes') {
        return showWebhook(request, reply, deps, endpointId, {
          status: 400,
          error: 'Tick the box to confirm that deliveries to this endpoint stop for good.',
        });
      }
      const deleted = await deps.webhooks.delete(
        request.consoleCaller.auth.owner,
        endpointId,
        deps.clock.now(),
      );
      if (!deleted) return showWebhook(request, reply, deps, null);
      return reply.redirect(`/dashboard/webhooks?deleted=${endpointId}`, 303);
    }),
  );
}

/** An action on the endpoint in the path. */
type EndpointAction = (request: FastifyRequest, reply: FastifyReply, endpointId: number) => Promise<unknown>;

/** Runs an action of the endpoint in the path; its refusal shows the page with the reason. */
function endpointAction(deps: WebhookActionDeps, run: EndpointAction) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const endpointId = endpointIdOf(request);
    if (endpointId === null) return showWebhook(request, reply, deps, null);
    try {
      return await run(request, reply, endpointId);
    } catch (error) {
      if (!isAppError(error)) throw error;
      // The endpoint is gone (or never was this caller's): its page says so.
      if (error.status === 404 && error.param === 'endpointId')
        return showWebhook(request, reply, deps, null);
      return showWebhook(request, reply, deps, endpointId, { status: error.status, error: error.message });
    }
  };
}

/** Rotates the endpoint's secret with the overlap chosen, once per form; the page shows the new secret once. */
async function rotateSecret(
  deps: WebhookActionDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  endpointId: number,
) {
  const chosen = Number(formField(request.body, 'overlapSeconds'));
  const overlap = OVERLAP_CHOICES.find((choice) => choice.seconds === chosen);
  if (!overlap) {
    return showWebhook(request, reply, deps, endpointId, {
      status: 400,
      error: 'Choose how long the old secret keeps signing.',
    });
  }
  return deps.shownOnce.send(request, reply, rotateSecretForm(endpointId), async () => {
    const rotated = await rotateWebhookSecret(
      deps,
      request.consoleCaller.auth.owner,
      endpointId,
      overlap.seconds,
    );
    return showWebhook(request, reply, deps, endpointId, {
      secret: { value: rotated.secret, rotated: true },
    });
  });
}
