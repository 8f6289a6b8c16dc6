import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Clock } from '../../../domain/clock.ts';
import {
  type IntegrationSettingsInput,
  integrationName,
  resolveSettings,
} from '../../../domain/integration.ts';
import type { Cluster } from '../../../platform/platform.ts';
import type { ApiKeyRecord, IntegrationRecord, IntegrationStore } from '../../../store/integrations.ts';
import { type IssuedKey, issueApiKey } from '../../../use-cases/api-keys.ts';
import { formField as field } from '../form.ts';
import { duration, sol, utc } from '../present.ts';
import type { ShownOnceForm, ShownOnceForms } from '../shown-once.ts';
import { operatorErrorPage } from './errors.ts';
import { operatorPageData } from './layout.ts';

const idParams = z.object({ id: z.string().regex(/^[1-9]\d{0,14}$/) });

/** What an action's redirect says was done, shown once on the integration's page. */
const DONE_MESSAGES = {
  created: 'Integration created. Issue it a key below.',
  suspended:
    'Integration suspended: every key of it is refused (MH_003) and its console sessions have ended.',
  resumed: 'Integration resumed: its keys that are not revoked work again.',
} as const;

type Done = keyof typeof DONE_MESSAGES | 'revoked';

/** A key as the operator's pages list it. */
function keyRow(key: ApiKeyRecord) {
  return {
    id: key.id,
    hint: key.hint,
    mode: key.mode,
    revoked: key.revokedAt !== null,
    status: key.revokedAt ? `revoked ${utc(key.revokedAt)}` : 'active',
    created: utc(key.createdAt),
    lastUsed: key.lastUsedAt ? utc(key.lastUsedAt) : 'never',
  };
}

/** An integration's effective settings in words, each saying whether it is the default or set for it. */
function settingsRows(stored: IntegrationSettingsInput) {
  const settings = resolveSettings(stored);
  const origin = (name: keyof IntegrationSettingsInput) =>
    stored[name] === undefined ? 'default' : 'set for this integration';
  return [
    { name: 'Default hops', value: String(settings.defaultHops), origin: origin('defaultHops') },
    {
      name: 'Default arrival',
      value: duration(settings.defaultArrivalSeconds),
      origin: origin('defaultArrivalSeconds'),
    },
    {
      name: 'Rate-limit multiplier',
      value: `${settings.rateLimitMultiplier}×`,
      origin: origin('rateLimitMultiplier'),
    },
    {
      name: 'Least reward claim',
      value:
        settings.minimumClaimLamports === undefined
          ? 'REWARDS_MIN_CLAIM_LAMPORTS'
          : sol(settings.minimumClaimLamports),
      origin: origin('minimumClaimLamports'),
    },
    {
      name: 'Fee schedule',
      value: Object.keys(settings.fees).length === 0 ? 'the deployment’s' : JSON.stringify(settings.fees),
      origin: origin('fees'),
    },
  ];
}

/** One integration of the list, with its keys. */
function listRow(integration: IntegrationRecord, keys: readonly ApiKeyRecord[]) {
  const overrides = Object.keys(integration.settings).filter(
    (name) => integration.settings[name as keyof IntegrationSettingsInput] !== undefined,
  );
  return {
    id: integration.id,
    name: integration.name,
    href: `/dashboard/operator/integrations/${integration.id}`,
    status: integration.status,
    created: utc(integration.createdAt),
    keys: keys.map(keyRow),
    settings: overrides.length === 0 ? 'defaults' : `set: ${overrides.join(', ')}`,
  };
}

interface IntegrationDeps {
  integrations: IntegrationStore;
  clock: Clock;
  cluster: Cluster;
  shownOnce: ShownOnceForms;
}

/** An integration's "issue a key" form: the key is shown once, so the form issues one at most. */
function issueKeyForm(integration: { id: number; name: string }): ShownOnceForm {
  const page = `/dashboard/operator/integrations/${integration.id}`;
  return {
    action: `${page}/keys`,
    repeated: {
      title: 'The key was already shown',
      message:
        'This form already issued a key, shown once on the page that answered it. It cannot be shown again, and no other key was issued. If it was not copied, revoke it and issue another.',
    },
    back: { href: page, label: `Back to ${integration.name}` },
  };
}

/**
 * The operator's integrations, through the store functions and use cases of the admin API
 * (src/http/endpoints/admin/integrations.ts): `GET /dashboard/operator/integrations` lists them
 * with their keys and creates one; an integration's page shows its settings and keys, issues a
 * key (shown once: its form issues one at most, however often it is sent), revokes one, and
 * suspends or resumes the integration.
 */
export async function integrationPages(app: FastifyInstance, deps: IntegrationDeps) {
  const { integrations, clock } = deps;

  app.get('/integrations', async (_request, reply) => showList(deps, reply, 200, {}));

  app.post('/integrations', async (request, reply) => {
    const name = field(request.body, 'name');
    const parsed = integrationName.safeParse(name);
    if (!parsed.success) {
      return showList(deps, reply, 400, {
        name,
        error: 'Give the integration a name of 1 to 100 characters.',
      });
    }
    const created = await integrations.create({ name: parsed.data, settings: {}, now: clock.now() });
    return reply.redirect(`/dashboard/operator/integrations/${created.id}?done=created`, 303);
  });

  app.get('/integrations/:id', async (request, reply) => {
    const integration = await named(deps, request, reply);
    return integration ? showIntegration(deps, request, reply, integration) : reply;
  });

  app.post('/integrations/:id/keys', async (request, reply) => {
    const integration = await named(deps, request, reply);
    return integration ? issueKey(deps, request, reply, integration) : reply;
  });

  for (const [action, status] of [
    ['suspend', 'suspended'],
    ['resume', 'active'],
  ] as const) {
    app.post(`/integrations/:id/${action}`, async (request, reply) => {
      const integration = await named(deps, request, reply);
      if (!integration) return reply;
      await integrations.setStatus(integration.id, status, clock.now());
      const done = action === 'suspend' ? 'suspended' : 'resumed';
      return reply.redirect(`/dashboard/operator/integrations/${integration.id}?done=${done}`, 303);
    });
  }

  app.post('/keys/:id/revoke', async (request, reply) => {
    const parsed = idParams.safeParse(request.params);
    const revoked = parsed.success ? await integrations.revokeKey(Number(parsed.data.id), clock.now()) : null;
    if (!revoked) {
      return operatorErrorPage(request, reply, 404, {
        title: 'Key not found',
        message: 'There is no API key with this id.',
      });
    }
    return reply.redirect(
      `/dashboard/operator/integrations/${revoked.integrationId}?done=revoked&key=${revoked.id}`,
      303,
    );
  });
}

/** The integrations list, with the create form as sent (and why it was refused). */
async function showList(
  { integrations }: IntegrationDeps,
  reply: FastifyReply,
  status: number,
  form: { name?: string; error?: string },
) {
  const listed = await integrations.list();
  const keys = await integrations.listKeysOf(listed.map((integration) => integration.id));
  const keysOf = (id: number) => keys.filter((key) => key.integrationId === id);
  return reply
    .code(status)
    .view(
      'operator/integrations',
      operatorPageData(
        true,
        { title: 'Integrations', rows: listed.map((row) => listRow(row, keysOf(row.id))), form },
        'integrations',
      ),
    );
}

/** The integration a request names, or its 404 page (then null). */
async function named({ integrations }: IntegrationDeps, request: FastifyRequest, reply: FastifyReply) {
  const parsed = idParams.safeParse(request.params);
  const integration = parsed.success ? await integrations.get(Number(parsed.data.id)) : null;
  if (integration) return integration;
  await operatorErrorPage(request, reply, 404, {
    title: 'Integration not found',
    message: 'There is no integration with this id.',
  });
  return null;
}

type NamedIntegration = NonNullable<Awaited<ReturnType<typeof named>>>;

/** An integration's page: its settings and keys, and what the action before it did. */
async function showIntegration(
  { integrations, shownOnce }: IntegrationDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  integration: NamedIntegration,
) {
  const keys = await integrations.listKeys(integration.id);
  const query = request.query as Record<string, unknown>;
  const done = typeof query.done === 'string' ? (query.done as Done) : undefined;
  let notice: string | undefined;
  if (done === 'revoked') {
    const key = keys.find((candidate) => String(candidate.id) === query.key);
    if (key)
      notice = `Key ${key.hint} revoked: it is refused at once, and console sessions opened with it have ended.`;
  } else if (done && Object.hasOwn(DONE_MESSAGES, done)) {
    notice = DONE_MESSAGES[done];
  }
  const shown = {
    id: integration.id,
    name: integration.name,
    status: integration.status,
    created: utc(integration.createdAt),
    updated: utc(integration.updatedAt),
  };
  return reply.view(
    'operator/integration',
    operatorPageData(
      true,
      {
        title: integration.name,
        integration: shown,
        keys: keys.map(keyRow),
        settings: settingsRows(integration.settings),
        notice,
        issueToken: shownOnce.field(request, issueKeyForm(integration).action),
      },
      'integrations',
    ),
  );
}

/** Issues a key of the mode chosen, as the admin API does, and shows it once: once per form. */
async function issueKey(
  deps: IntegrationDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  integration: NamedIntegration,
) {
  const mode = field(request.body, 'mode');
  if (mode !== 'test' && mode !== 'live') {
    return operatorErrorPage(request, reply, 400, {
      title: 'No key issued',
      message: 'Choose the key’s mode: test or live.',
    });
  }
  return deps.shownOnce.send(request, reply, issueKeyForm(integration), async () => {
    const issued = await issueApiKey(
      { integrations: deps.integrations, clock: deps.clock, cluster: deps.cluster, log: request.log },
      { integrationId: integration.id, mode },
    );
    return showNewKey(reply, integration, issued);
  });
}

/** The page showing a key just issued, the only time it is shown. */
function showNewKey(reply: FastifyReply, integration: NamedIntegration, issued: IssuedKey) {
  return reply.view(
    'operator/new-key',
    operatorPageData(
      true,
      {
        title: 'New API key',
        integration: { id: integration.id, name: integration.name },
        key: issued.key,
        mode: issued.record.mode,
        hint: issued.record.hint,
        warning: issued.warning,
      },
      'integrations',
    ),
  );
}
