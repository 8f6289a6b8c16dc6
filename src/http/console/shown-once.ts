import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../domain/clock.ts';
import type { ConsoleSessionStore } from '../../store/console-sessions.ts';
import type { ErrorPage } from './errors.ts';
import { formField } from './form.ts';
import { hashToken } from './session.ts';

/*
 * Forms whose answer shows a secret once (an API key issued, a webhook endpoint's signing secret):
 * reloading that answer sends the form again, as does a double click, and each would make another
 * secret. Such a form carries a one-time token made for its session and action: a random nonce
 * with an HMAC of it keyed by the session's own token (the cookie's), so it is good only in the
 * session that got the page. The first POST with it records the nonce and acts; any later one acts
 * no more and says the secret was shown once (Stripe shows a secret key once, alike). The database
 * keeps only the nonce, beside the session's token hash, and drops it with the session.
 */

/** The form field holding the token. */
const FIELD = 'formToken';
const NONCE_BYTES = 16;

/** A form showing a secret once: where it posts, what a repeat of it is told, and where to go back to. */
export interface ShownOnceForm {
  /** The form's action path: a token is good for the form it was made for. */
  action: string;
  /** What a repeated POST is told: what was shown once, and what to do if it was not kept. */
  repeated: { title: string; message: string };
  back: { href: string; label: string };
}

const OUT_OF_DATE =
  'This form was not sent from a page of your current session, so nothing was done. Open the page again and send the form from there.';

/** Makes and honours the one-time tokens of the forms of one console's sessions (held in `cookie`). */
export function createShownOnceForms(deps: {
  sessions: Pick<ConsoleSessionStore, 'useForm' | 'releaseForm'>;
  clock: Clock;
  /** The cookie holding the session's token. */
  cookie: string;
  /** How this console shows an error page. */
  errorPage: ErrorPage;
}) {
  const sessionToken = (request: FastifyRequest) => request.cookies[deps.cookie];
  const macOf = (token: string, action: string, nonce: Buffer) =>
    createHmac('sha256', token).update(`shown-once ${action}\n`).update(nonce).digest();

  /** The nonce of a token made for this session and action, or null. */
  function nonceOf(token: string, action: string, sent: string): Buffer | null {
    const [nonceText, macText, extra] = sent.split('.');
    if (!nonceText || !macText || extra !== undefined) return null;
    const nonce = Buffer.from(nonceText, 'base64url');
    const mac = Buffer.from(macText, 'base64url');
    if (nonce.length !== NONCE_BYTES) return null;
    const expected = macOf(token, action, nonce);
    return mac.length === expected.length && timingSafeEqual(mac, expected) ? nonce : null;
  }

  return {
    /** The form field's name and a fresh token for a form posting to `action`, on a signed-in page. */
    field(request: FastifyRequest, action: string) {
      const token = sessionToken(request);
      if (!token) throw new Error('a one-time form token needs a signed-in session');
      const nonce = randomBytes(NONCE_BYTES);
      return {
        name: FIELD,
        value: `${nonce.toString('base64url')}.${macOf(token, action, nonce).toString('base64url')}`,
      };
    },

    /**
     * Runs `act` for the first POST of a form's token; a repeated one gets the form's "already
     * shown" page (409), and a token not made for this session and form an "out of date" one
     * (400). When `act` throws, nothing was shown: the token may be sent again.
     */
    async send(
      request: FastifyRequest,
      reply: FastifyReply,
      form: ShownOnceForm,
      act: () => Promise<unknown>,
    ): Promise<unknown> {
      const token = sessionToken(request);
      const nonce = token ? nonceOf(token, form.action, formField(request.body, FIELD)) : null;
      if (!token || !nonce) {
        return deps.errorPage(request, reply, 400, {
          title: 'This form is out of date',
          message: OUT_OF_DATE,
          back: form.back,
        });
      }
      const use = { sessionTokenHash: hashToken(token), nonce };
      if (!(await deps.sessions.useForm({ ...use, now: deps.clock.now() }))) {
        return deps.errorPage(request, reply, 409, { ...form.repeated, back: form.back });
      }
      try {
        return await act();
      } catch (error) {
        await deps.sessions.releaseForm(use);
        throw error;
      }
    },
  };
}

export type ShownOnceForms = ReturnType<typeof createShownOnceForms>;
