import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { apiKeyHint, generateApiKey, hashApiKey } from '../../../domain/api-keys.ts';
import type { Clock } from '../../../domain/clock.ts';
import { AppError } from '../../../domain/errors.ts';
import { integrationSettingsSchema, mergeSettings, resolveSettings } from '../../../domain/integration.ts';
import type { ApiKeyRecord, IntegrationRecord, IntegrationStore } from '../../../store/integrations.ts';
import { errorResponses, integerId } from '../../schemas/common.ts';

const integrationSchema = z.object({
  id: z.int(),
  name: z.string(),
  status: z.enum(['active', 'suspended']),
  settings: z.object({
    defaultHops: z.int(),
    defaultArrivalSeconds: z.int(),
    rateLimitMultiplier: z.int(),
    minimumClaimLamports: z
      .int()
      .optional()
      .describe(
        'Least claimable lamports of a reward claim, when overridden (else REWARDS_MIN_CLAIM_LAMPORTS).',
      ),
    fees: z
      .record(z.string(), z.unknown())
      .describe('Fee schedule overrides; empty when the deployment defaults apply.'),
  }),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});

const apiKeySchema = z.object({
  id: z.int(),
  integrationId: z.int(),
  mode: z.enum(['test', 'live']),
  hint: z.string().describe('Prefix and last four characters; the key itself is never shown again.'),
  createdAt: z.iso.datetime(),
  revokedAt: z.iso.datetime().nullable(),
});

const createdKeySchema = z.object({
  id: z.int(),
  integrationId: z.int(),
  key: z.string().describe('The full API key. Shown only in this response.'),
  mode: z.enum(['test', 'live']),
  createdAt: z.iso.datetime(),
});

const presentIntegration = (integration: IntegrationRecord) => ({
  id: integration.id,
  name: integration.name,
  status: integration.status,
  settings: resolveSettings(integration.settings),
  createdAt: integration.createdAt.toISOString(),
  updatedAt: integration.updatedAt.toISOString(),
});

const presentKey = (key: ApiKeyRecord) => ({
  id: key.id,
  integrationId: key.integrationId,
  mode: key.mode,
  hint: key.hint,
  createdAt: key.createdAt.toISOString(),
  revokedAt: key.revokedAt?.toISOString() ?? null,
});

const idParams = z.object({ id: integerId });
const name = z.string().trim().min(1).max(100);
/** PATCH accepts `null` for a setting to remove its override and return to the default. */
const settingsPatch = z
  .object(
    Object.fromEntries(
      Object.entries(integrationSettingsSchema.shape).map(([key, schema]) => [
        key,
        schema.unwrap().nullable().optional(),
      ]),
    ),
  )
  .strict();

function notFound(id: number): never {
  throw new AppError('MH_016', `No integration with id ${id}.`, { status: 404, param: 'id' });
}

/** Operator endpoints: integrations, their keys, suspension. */
export async function adminIntegrationEndpoints(
  app: FastifyInstance,
  deps: { integrations: IntegrationStore; clock: Clock },
) {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const { integrations, clock } = deps;

  routes.post(
    '/integrations',
    {
      schema: {
        body: z.object({ name, settings: integrationSettingsSchema.optional() }).strict(),
        response: { 200: integrationSchema, ...errorResponses },
      },
    },
    async (request) => {
      const created = await integrations.create({
        name: request.body.name,
        settings: request.body.settings ?? {},
        now: clock.now(),
      });
      return presentIntegration(created);
    },
  );

  routes.get(
    '/integrations',
    { schema: { response: { 200: z.object({ items: z.array(integrationSchema) }), ...errorResponses } } },
    async () => ({ items: (await integrations.list()).map(presentIntegration) }),
  );

  routes.get(
    '/integrations/:id',
    {
      schema: {
        params: idParams,
        response: { 200: integrationSchema.extend({ keys: z.array(apiKeySchema) }), ...errorResponses },
      },
    },
    async (request) => {
      const integration = (await integrations.get(request.params.id)) ?? notFound(request.params.id);
      const keys = await integrations.listKeys(integration.id);
      return { ...presentIntegration(integration), keys: keys.map(presentKey) };
    },
  );

  routes.patch(
    '/integrations/:id',
    {
      schema: {
        params: idParams,
        body: z.object({ name: name.optional(), settings: settingsPatch.optional() }).strict(),
        response: { 200: integrationSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { settings } = request.body;
      const updated = await integrations.update(request.params.id, {
        ...(request.body.name === undefined ? {} : { name: request.body.name }),
        ...(settings === undefined
          ? {}
          : { settings: (stored) => integrationSettingsSchema.parse(mergeSettings(stored, settings)) }),
        now: clock.now(),
      });
      return presentIntegration(updated ?? notFound(request.params.id));
    },
  );

  for (const [action, status] of [
    ['suspend', 'suspended'],
    ['resume', 'active'],
  ] as const) {
    routes.post(
      `/integrations/:id/${action}`,
      { schema: { params: idParams, response: { 200: integrationSchema, ...errorResponses } } },
      async (request) => {
        const updated = await integrations.setStatus(request.params.id, status, clock.now());
        return presentIntegration(updated ?? notFound(request.params.id));
      },
    );
  }

  routes.post(
    '/integrations/:id/keys',
    {
      schema: {
        params: idParams,
        body: z.object({ mode: z.enum(['test', 'live']) }).strict(),
        response: { 200: createdKeySchema, ...errorResponses },
      },
    },
    async (request) => {
      const integration = (await integrations.get(request.params.id)) ?? notFound(request.params.id);
      const key = generateApiKey(request.body.mode);
      const stored = await integrations.createKey({
        integrationId: integration.id,
        mode: request.body.mode,
        hash: hashApiKey(key),
        hint: apiKeyHint(key),
        now: clock.now(),
      });
      return {
        id: stored.id,
        integrationId: stored.integrationId,
        key,
        mode: stored.mode,
        createdAt: stored.createdAt.toISOString(),
      };
    },
  );

  routes.get(
    '/integrations/:id/keys',
    {
      schema: {
        params: idParams,
        response: { 200: z.object({ items: z.array(apiKeySchema) }), ...errorResponses },
      },
    },
    async (request) => {
      const integration = (await integrations.get(request.params.id)) ?? notFound(request.params.id);
      return { items: (await integrations.listKeys(integration.id)).map(presentKey) };
    },
  );

  routes.post(
    '/keys/:id/revoke',
    { schema: { params: idParams, response: { 200: apiKeySchema, ...errorResponses } } },
    async (request) => {
      const revoked = await integrations.revokeKey(request.params.id, clock.now());
      if (!revoked)
        throw new AppError('MH_016', `No API key with id ${request.params.id}.`, {
          status: 404,
          param: 'id',
        });
      return presentKey(revoked);
    },
  );
}
