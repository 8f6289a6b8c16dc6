import { join } from 'node:path';
import fastifyCompress from '@fastify/compress';
import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import fastifyHelmet from '@fastify/helmet';
import fastifyRateLimit from '@fastify/rate-limit';
import fastifyStatic from '@fastify/static';
import fastifyView from '@fastify/view';
import type { Address } from '@solana/kit';
import { Eta } from 'eta';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../domain/clock.ts';
import { AppError } from '../../domain/errors.ts';
import type { Cluster } from '../../platform/platform.ts';
import type { Store } from '../../store/index.ts';
import type { ClaimDeps } from '../../use-cases/claim-rewards.ts';
import type { RegisterDeps } from '../../use-cases/webhook-endpoints.ts';
import type { AuthContext } from '../auth.ts';
import { DEFAULT_ACTIONS_PER_MINUTE, limitActions } from './action-limit.ts';
import { earningsPage } from './earnings-page.ts';
import { errorPage, registerConsoleErrors } from './errors.ts';
import { HTMX_DIR, HTMX_PREFIX } from './layout.ts';
import { isRefresh } from './live.ts';
import { type OperatorDeps, operatorPlugin } from './operator/index.ts';
import {
  createConsoleSessions,
  DEFAULT_SIGN_INS_PER_MINUTE,
  isSameOrigin,
  SESSION_COOKIE,
  signInLocation,
} from './session.ts';
import { createShownOnceForms } from './shown-once.ts';
import { signInPages } from './sign-in.ts';
import { createTransferDetails, type DetailsChain } from './transfer-details.ts';
import { transferListPage } from './transfer-list-page.ts';
import { transferPage } from './transfer-page.ts';
import { usagePage } from './usage-page.ts';
import { webhookActions } from './webhook-actions.ts';
import { createWebhookDetails } from './webhook-details.ts';
import { webhookListPage } from './webhook-list-page.ts';
import { webhookPage } from './webhook-page.ts';

/** What the console needs: the store functions and use cases the API calls, and the key check. */
export interface ConsoleDeps {
  store: Pick<Store, 'transfers' | 'deliveries' | 'consoleSessions' | 'webhooks' | 'rewards'>;
  /** The API's own check of a presented key (src/http/auth.ts). */
  authenticateKey(key: string): Promise<AuthContext>;
  chain: DetailsChain;
  platform: { cluster: Cluster; programAddress: Address };
  clock: Clock;
  /**
   * Session cookies are Secure whatever a request's protocol says: in production the console is
   * served over HTTPS by a TLS front, and requests reach the service as plain HTTP.
   */
  secureCookies: boolean;
  /** Sign-in attempts allowed per address a minute, per process (default 10). */
  signInsPerMinute?: number | undefined;
  /** Actions (form posts) of a signed-in page allowed per API key, and for the operator, a minute, per process (default 60). */
  actionsPerMinute?: number | undefined;
  /** The operator's pages (/dashboard/operator), served only where an admin token is configured. */
  operator?: OperatorDeps;
  /** How the API registers and tests webhook endpoints: its sender, network policy and ping timeout. */
  webhooks: Omit<RegisterDeps, 'webhooks' | 'clock'>;
  /** What claims need, as `POST /rewards/claim` has it, and the minimum of integrations that set none. */
  rewards: { claims: ClaimDeps; minClaimLamports: bigint };
}

const HERE = import.meta.dirname;

/**
 * The integrator's console under /dashboard: server-rendered pages (Eta templates, escaped by
 * default), a session cookie opened with an API key, htmx for live refresh. Its parsers, cookies,
 * headers and error pages stay inside this scope; the API's are untouched.
 */
export function consolePlugin(deps: ConsoleDeps) {
  return async (app: FastifyInstance) => {
    // Pages for people, not operations of the API reference.
    app.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true };
    });
    await registerPlumbing(app);
    registerConsoleErrors(app);
    const signInsPerMinute = deps.signInsPerMinute ?? DEFAULT_SIGN_INS_PER_MINUTE;
    const actionsPerMinute = deps.actionsPerMinute ?? DEFAULT_ACTIONS_PER_MINUTE;
    const sessions = createConsoleSessions({
      sessions: deps.store.consoleSessions,
      clock: deps.clock,
      secureCookies: deps.secureCookies,
    });
    // Every form posts back to the console itself; anything else is refused before it runs.
    app.addHook('onRequest', async (request, reply) => {
      if (request.method === 'POST' && !isSameOrigin(request)) {
        return errorPage(request, reply, 403, { title: 'Refused', message: CROSS_SITE_MESSAGE });
      }
    });
    app.get('/', async (_request, reply) => reply.redirect('/dashboard/transfers', 303));
    await app.register(signInPages, { sessions, authenticateKey: deps.authenticateKey, signInsPerMinute });
    if (deps.operator)
      await app.register(
        operatorPlugin({
          ...deps.operator,
          secureCookies: deps.secureCookies,
          signInsPerMinute,
          actionsPerMinute,
        }),
        {
          prefix: '/operator',
        },
      );
    const details = createTransferDetails({
      transfers: deps.store.transfers,
      deliveries: deps.store.deliveries,
      chain: deps.chain,
      programAddress: deps.platform.programAddress,
      cluster: deps.platform.cluster,
      clock: deps.clock,
    });
    await app.register(async (pages) => {
      pages.decorateRequest('consoleCaller', null as never);
      pages.addHook('onRequest', async (request, reply) => {
        const found = await sessions.resolve(request);
        if ('auth' in found) {
          request.consoleCaller = found;
          return;
        }
        if (found.ended) await sessions.close(request, reply);
        const location = signInLocation(found.ended, request.url);
        // htmx follows HX-Redirect with a full page load; a plain request follows Location.
        if (isRefresh(request)) return reply.header('hx-redirect', location).send();
        return reply.redirect(location, 303);
      });
      limitActions(pages, actionsPerMinute, (request) => `key:${request.consoleCaller.auth.apiKeyId}`);
      await pages.register(transferListPage, { transfers: deps.store.transfers });
      await pages.register(transferPage, { details });
      await registerWebhookPages(pages, deps);
      await pages.register(usagePage, { ...deps.store, clock: deps.clock });
      await pages.register(earningsPage, {
        ...deps.rewards,
        rewards: deps.store.rewards,
        transfers: deps.store.transfers,
        cluster: deps.platform.cluster,
      });
    });
  };
}

/** The webhooks section: the endpoints with the register form, an endpoint's page and its actions. */
async function registerWebhookPages(pages: FastifyInstance, deps: ConsoleDeps) {
  const webhookDeps = {
    ...deps.webhooks,
    webhooks: deps.store.webhooks,
    deliveries: deps.store.deliveries,
    clock: deps.clock,
    // Registering an endpoint and rotating its secret show the secret once: once per form.
    shownOnce: createShownOnceForms({
      sessions: deps.store.consoleSessions,
      clock: deps.clock,
      cookie: SESSION_COOKIE,
      errorPage,
    }),
    details: createWebhookDetails({
      webhooks: deps.store.webhooks,
      deliveries: deps.store.deliveries,
      clock: deps.clock,
    }),
  };
  await pages.register(webhookListPage, webhookDeps);
  await pages.register(webhookPage, webhookDeps);
  await pages.register(webhookActions, webhookDeps);
}

const CROSS_SITE_MESSAGE =
  'This form was sent from another site, so the console refused it. Use the console’s own pages.';

/** Compression, cookies, form bodies, security headers, templates and the static files. */
async function registerPlumbing(app: FastifyInstance) {
  // Pages, the stylesheet and the script go compressed (a page is a fifth of its size or less:
  // docs/integrating.md, "What a page weighs"); htmx has its own .gz beside it. Safe from
  // BREACH-style guessing: no page a GET answers holds a secret (a key or signing secret is shown
  // once, on the answer to a same-origin form). Before @fastify/static, which it must wrap.
  await app.register(fastifyCompress, { encodings: ['br', 'gzip'], globalDecompression: false });
  await app.register(fastifyHelmet, {
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
        // Local mode serves plain HTTP on 127.0.0.1; TLS and HSTS belong to the proxy in front.
        upgradeInsecureRequests: null,
      },
    },
    hsts: false,
    // Not `no-referrer`: browsers then send `Origin: null` with the console's own form posts, which
    // the cross-site check must be able to tell from another site's.
    referrerPolicy: { policy: 'same-origin' },
  });
  // Sign-ins are limited per address (in this process): an API key or the admin token cannot be
  // guessed at the network's pace. Routes opt in (`signInLimit`, session.ts); a signed-in page's
  // actions have a limit of their own (action-limit.ts).
  await app.register(fastifyRateLimit, {
    global: false,
    errorResponseBuilder: (_request, context) =>
      new AppError(
        'MH_004',
        `Too many sign-in attempts from this address. Try again in ${Math.ceil(context.ttl / 1000)} s.`,
      ),
  });
  await app.register(fastifyCookie);
  await app.register(fastifyFormbody, { bodyLimit: 4096 });
  await app.register(fastifyView, {
    engine: { eta: new Eta() },
    templates: join(HERE, 'views'),
    production: true,
  });
  await app.register(fastifyStatic, {
    root: join(HERE, 'assets'),
    prefix: '/assets/',
    maxAge: '1h',
    immutable: false,
  });
  await app.register(fastifyStatic, {
    root: HTMX_DIR,
    prefix: HTMX_PREFIX,
    allowedPath: (path) => path === '/htmx.min.js',
    preCompressed: true,
    maxAge: '365d',
    immutable: true,
    decorateReply: false,
  });
}
