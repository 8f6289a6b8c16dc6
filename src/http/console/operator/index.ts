import type { FastifyInstance } from 'fastify';
import type { ClockReader } from '../../../chain/types.ts';
import type { Clock } from '../../../domain/clock.ts';
import type { PlatformAdmin } from '../../../platform/admin.ts';
import type { Platform } from '../../../platform/platform.ts';
import type { Store } from '../../../store/index.ts';
import { DEFAULT_ACTIONS_PER_MINUTE, limitActions } from '../action-limit.ts';
import { isRefresh } from '../live.ts';
import { DEFAULT_SIGN_INS_PER_MINUTE } from '../session.ts';
import { createShownOnceForms } from '../shown-once.ts';
import { operatorErrorPage, registerOperatorErrors } from './errors.ts';
import { integrationPages } from './integrations.ts';
import { keeperPage } from './keeper.ts';
import { OPERATOR_HOME } from './layout.ts';
import { platformPage } from './platform.ts';
import { createOperatorSessions, OPERATOR_COOKIE, operatorSignInLocation } from './session.ts';
import { operatorSignInPages } from './sign-in.ts';

/** What the operator's pages need: the admin token and what the admin API acts through. */
export interface OperatorDeps {
  /** ADMIN_TOKEN: the admin API's token opens the operator's console too. */
  adminToken: string;
  /** The key of operator sessions' MACs, derived from ENCRYPTION_KEY (see session.ts). */
  sessionMacKey: Buffer;
  store: Pick<Store, 'integrations' | 'consoleSessions' | 'keeperHealth'>;
  platformAdmin: Pick<PlatformAdmin, 'status'>;
  platform: Platform;
  /** The chain's clock: keeper work falls due by it. */
  chain: ClockReader;
  clock: Clock;
  /** Session cookies Secure whatever the request's protocol (see the console's deps). */
  secureCookies?: boolean;
  /** Sign-in attempts allowed per address a minute (see the console's deps). */
  signInsPerMinute?: number;
  /** Actions allowed a minute, all operator sessions together (see the console's deps). */
  actionsPerMinute?: number;
}

/**
 * The operator's console under /dashboard/operator: its own sign-in with the admin token and its
 * own session cookie, then integrations and their keys, the platform on chain and the keeper's
 * health. An integrator's session opens none of it.
 */
export function operatorPlugin(deps: OperatorDeps) {
  return async (app: FastifyInstance) => {
    app.decorateRequest('operatorSignedIn', false);
    registerOperatorErrors(app);
    const sessions = createOperatorSessions({
      sessions: deps.store.consoleSessions,
      clock: deps.clock,
      adminToken: deps.adminToken,
      macKey: deps.sessionMacKey,
      secureCookies: deps.secureCookies ?? false,
    });
    app.get('/', async (_request, reply) => reply.redirect(OPERATOR_HOME, 303));
    await app.register(operatorSignInPages, {
      sessions,
      adminToken: deps.adminToken,
      signInsPerMinute: deps.signInsPerMinute ?? DEFAULT_SIGN_INS_PER_MINUTE,
    });
    await app.register(async (pages) => {
      pages.addHook('onRequest', async (request, reply) => {
        const found = await sessions.resolve(request);
        if ('signedIn' in found) {
          request.operatorSignedIn = true;
          return;
        }
        if (found.ended) await sessions.close(request, reply);
        // Back to the page asked for after signing in; a form's action is no page to come back to.
        const location = operatorSignInLocation(
          found.ended,
          request.method === 'GET' ? request.url : undefined,
        );
        // htmx follows HX-Redirect with a full page load; a plain request follows Location.
        if (isRefresh(request)) return reply.header('hx-redirect', location).send();
        return reply.redirect(location, 303);
      });
      // One admin token, one principal: every operator session counts against the same limit.
      limitActions(pages, deps.actionsPerMinute ?? DEFAULT_ACTIONS_PER_MINUTE, () => 'operator');
      // The operator's answers are for the operator alone: never kept by a browser or a proxy.
      pages.addHook('onSend', async (_request, reply) => {
        reply.header('cache-control', 'no-store');
      });
      await pages.register(integrationPages, {
        integrations: deps.store.integrations,
        clock: deps.clock,
        cluster: deps.platform.cluster,
        shownOnce: createShownOnceForms({
          sessions: deps.store.consoleSessions,
          clock: deps.clock,
          cookie: OPERATOR_COOKIE,
          errorPage: operatorErrorPage,
        }),
      });
      await pages.register(platformPage, { platformAdmin: deps.platformAdmin, platform: deps.platform });
      await pages.register(keeperPage, {
        keeperHealth: deps.store.keeperHealth,
        chain: deps.chain,
        clock: deps.clock,
      });
    });
  };
}
