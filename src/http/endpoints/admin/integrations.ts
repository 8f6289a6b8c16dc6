import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Clock } from '../../../domain/clock.ts';
import { AppError } from '../../../domain/errors.ts';
import {
  type IntegrationStatus,
  integrationName,
  integrationSettingsSchema,
  mergeSettings,
  resolveSettings,
} from '../../../domain/integration.ts';
import type { Cluster } from '../../../platform/platform.ts';
import type { ApiKeyRecord, IntegrationRecord, IntegrationStore } from '../../../store/integrations.ts';
import { issueApiKey } from '../../../use-cases/api-keys.ts';
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
  lastUsedAt: z.iso
    .datetime()
    .nullable()
    .describe('When the key last authenticated a request or opened a console session, to the minute.'),
});

const createdKeySchema = z.object({
  id: z.int(),
  integrationId: z.int(),
  key: z.string().describe('The full API key. Shown only in this response.'),
  mode: z.enum(['test', 'live']),
  createdAt: z.iso.datetime(),
  warning: z
    .string()
    .optional()
    .describe('Present when the key is live and the service runs on a local chain (cluster localnet).'),
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
  lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
});

const idParams = z.object({ id: integerId });
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

const createBody = z
  .object({ name: integrationName, settings: integrationSettingsSchema.optional() })
  .strict();
const updateBody = z
  .object({ name: integrationName.optional(), settings: settingsPatch.optional() })
  .strict();
const createKeyBody = z.object({ mode: z.enum(['test', 'live']) }).strict();

interface IntegrationDeps {
  integrations: IntegrationStore;
  clock: Clock;
  /** The cluster the service runs on: a live key on a local one is warned about. */
  cluster: Cluster;
}

/** The integration with this id, or MH_016 (404). */
export async function existingIntegration(
  integrations: IntegrationStore,
  id: number,
): Promise<IntegrationRecord> {
  return (await integrations.get(id)) ?? notFound(id);
}

/** Operator endpoints: integrations, their keys, suspension. */
export async function adminIntegrationEndpoints(app: FastifyInstance, deps: IntegrationDeps) {
  registerCreateIntegration(app, deps);
  registerListIntegrations(app, deps);
  registerGetIntegration(app, deps);
  registerUpdateIntegration(app, deps);
  registerSetIntegrationStatus(app, deps, 'suspend', 'suspended');
  registerSetIntegrationStatus(app, deps, 'resume', 'active');
  registerCreateKey(app, deps);
  registerListKeys(app, deps);
  registerRevokeKey(app, deps);
}

/** `POST /integrations`. */
function registerCreateIntegration(app: FastifyInstance, { integrations, clock }: IntegrationDeps) {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/integrations',
    {
      schema: {
        body: createBody,
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
}

/** `GET /integrations`. */
function registerListIntegrations(app: FastifyInstance, { integrations }: IntegrationDeps) {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/integrations',
    {
      schema: {
        response: { 200: z.object({ items: z.array(integrationSchema) }), ...errorResponses },
      },
    },
    async () => ({ items: (await integrations.list()).map(presentIntegration) }),
  );
}

/** `GET /integrations/{id}`: the integration with its keys. */
function registerGetIntegration(app: FastifyInstance, { integrations }: IntegrationDeps) {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/integrations/:id',
    {
      schema: {
        params: idParams,
        response: { 200: integrationSchema.extend({ keys: z.array(apiKeySchema) }), ...errorResponses },
      },
    },
    async (request) => {
      const integration = await existingIntegration(integrations, request.params.id);
      const keys = await integrations.listKeys(integration.id);
      return { ...presentIntegration(integration), keys: keys.map(presentKey) };
    },
  );
}

/** `PATCH /integrations/{id}`: renames it and changes or removes setting overrides. */
function registerUpdateIntegration(app: FastifyInstance, { integrations, clock }: IntegrationDeps) {
  app.withTypeProvider<ZodTypeProvider>().patch(
    '/integrations/:id',
    {
      schema: {
        params: idParams,
        body: updateBody,
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
}

/** `POST /integrations/{id}/suspend` and `POST /integrations/{id}/resume`. */
function registerSetIntegrationStatus(
  app: FastifyInstance,
  { integrations, clock }: IntegrationDeps,
  action: 'suspend' | 'resume',
  status: IntegrationStatus,
) {
  app.withTypeProvider<ZodTypeProvider>().post(
    `/integrations/:id/${action}`,
    {
      schema: {
        params: idParams,
        response: { 200: integrationSchema, ...errorResponses },
      },
    },
    async (request) => {
      const updated = await integrations.setStatus(request.params.id, status, clock.now());
      return presentIntegration(updated ?? notFound(request.params.id));
    },
  );
}

/** `POST /integrations/{id}/keys`: a new API key, shown only in this response. */
function registerCreateKey(app: FastifyInstance, { integrations, clock, cluster }: IntegrationDeps) {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/integrations/:id/keys',
    {
      schema: {
        params: idParams,
        body: createKeyBody,
        response: { 200: createdKeySchema, ...errorResponses },
      },
    },
    async (request) => {
      const integration = await existingIntegration(integrations, request.params.id);
      const { record, key, warning } = await issueApiKey(
        { integrations, clock, cluster, log: request.log },
        { integrationId: integration.id, mode: request.body.mode },
      );
      return {
        id: record.id,
        integrationId: record.integrationId,
        key,
        mode: record.mode,
        createdAt: record.createdAt.toISOString(),
        ...(warning ? { warning } : {}),
      };
    },
  );
}

/** `GET /integrations/{id}/keys`. */
function registerListKeys(app: FastifyInstance, { integrations }: IntegrationDeps) {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/integrations/:id/keys',
    {
      schema: {
        params: idParams,
        response: { 200: z.object({ items: z.array(apiKeySchema) }), ...errorResponses },
      },
    },
    async (request) => {
      const integration = await existingIntegration(integrations, request.params.id);
      return { items: (await integrations.listKeys(integration.id)).map(presentKey) };
    },
  );
}

/** `POST /keys/{id}/revoke`. */
function registerRevokeKey(app: FastifyInstance, { integrations, clock }: IntegrationDeps) {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/keys/:id/revoke',
    {
      schema: {
        params: idParams,
        response: { 200: apiKeySchema, ...errorResponses },
      },
    },
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
