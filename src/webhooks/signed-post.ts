import { signatureHeader } from '../domain/webhook-signature.ts';
import type { WebhookPostResult, WebhookSender } from './sender.ts';

/** A delivery counts as received when any 2xx answer comes within this long (decisions: 10 s). */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** Signs an event body with every given secret at `now` and POSTs it with the event headers. */
export function signedPost(
  sender: Pick<WebhookSender, 'post'>,
  input: {
    url: string;
    secrets: readonly string[];
    eventId: string;
    eventType: string;
    body: string;
    now: Date;
    timeoutMs: number;
    signal?: AbortSignal;
  },
): Promise<WebhookPostResult> {
  const timestamp = Math.floor(input.now.getTime() / 1000);
  return sender.post({
    url: input.url,
    body: input.body,
    headers: {
      'mh-event-id': input.eventId,
      'mh-event-type': input.eventType,
      'mh-signature': signatureHeader(input.secrets, timestamp, input.body),
    },
    timeoutMs: input.timeoutMs,
    ...(input.signal ? { signal: input.signal } : {}),
  });
}

/** True when the receiver answered 2xx. */
export function isDelivered(result: WebhookPostResult): boolean {
  return result.kind === 'response' && result.status >= 200 && result.status < 300;
}

/** What the delivery log records of a POST's answer. */
export function attemptOutcome(result: WebhookPostResult) {
  return {
    succeeded: isDelivered(result),
    statusCode: result.kind === 'response' ? result.status : null,
    responseExcerpt: result.kind === 'response' ? result.body : null,
    durationMs: result.durationMs,
    error: result.kind === 'failed' ? result.error : null,
  };
}
