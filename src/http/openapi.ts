import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { z } from 'zod';

/**
 * The API reference: the OpenAPI document generated from the routes' schemas (at
 * /api/v1/openapi.json) and its browsable form (at /docs). Registered before the routes, which it
 * collects as they are added.
 */
export async function registerOpenApi(app: FastifyInstance) {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Transfer Router API',
        version: '1.0.0',
        description:
          'Routes a Solana token transfer from a source wallet to a recipient through 3 to 10 hops, timed to arrive after a chosen delay.',
        // The service is not published under an open licence: its use is on the operator's terms.
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      // Relative: the deployment that serves this document (the test cluster's or mainnet's host).
      servers: [{ url: '/', description: 'The host serving this document' }],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          bearer: { type: 'http', scheme: 'bearer' },
        },
      },
    },
    transform: (input) => markOptionalBody(jsonSchemaTransform(input), input.schema?.body),
    transformObject: (input) =>
      dropUnreferencedSchemas(describeApiConventions(jsonSchemaTransformObject(input) as OpenApiDocument)),
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

type OpenApiOperation = {
  parameters?: unknown[];
  security?: unknown[];
  description?: string;
  requestBody?: { required?: boolean };
  [OPTIONAL_BODY]?: boolean;
};
type OpenApiDocument = {
  paths?: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, unknown> };
};

/** Marks, for {@link describeApiConventions}, an operation whose body may be left out. */
const OPTIONAL_BODY = 'x-optional-body';

/**
 * Marks a route whose body schema accepts no body: @fastify/swagger documents every body as
 * required, and copies `x-` keys of the route's schema onto its operation.
 */
function markOptionalBody<T extends { schema: unknown }>(transformed: T, body: unknown): T {
  if (!(body instanceof z.ZodType) || !body.safeParse(undefined).success) return transformed;
  return { ...transformed, schema: { ...(transformed.schema as object), [OPTIONAL_BODY]: true } };
}

/** Routes whose POST honours an Idempotency-Key without requiring one (decision C7). */
const OPTIONAL_IDEMPOTENCY = new Set(['/api/v1/transfers/estimate']);

/**
 * Adds to the generated document what the API's hooks enforce rather than its schemas: the API-key
 * security of every /api/v1 operation (none elsewhere: health needs no key) and the
 * Idempotency-Key header of POSTs; and says which bodies may be left out.
 */
function describeApiConventions(document: OpenApiDocument): OpenApiDocument {
  for (const [path, operations] of Object.entries(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      if (!operation[OPTIONAL_BODY]) continue;
      delete operation[OPTIONAL_BODY];
      if (operation.requestBody) operation.requestBody.required = false;
    }
    if (!path.startsWith('/api/v1/')) {
      for (const operation of Object.values(operations)) operation.security = [];
      continue;
    }
    for (const [method, operation] of Object.entries(operations)) {
      operation.security = [{ apiKey: [] }, { bearer: [] }];
      if (method !== 'post') continue;
      operation.parameters = [
        ...(operation.parameters ?? []),
        {
          in: 'header',
          name: 'Idempotency-Key',
          required: !OPTIONAL_IDEMPOTENCY.has(path),
          description:
            '8-64 characters of letters, digits, ".", "_", "-". The first response to a key is replayed for its lifetime (24 h by default) with `Idempotent-Replayed: true`; the same key with another request is MH_071, while the first still runs MH_072.',
          schema: { type: 'string', pattern: '^[A-Za-z0-9._-]{8,64}$' },
        },
      ];
    }
  }
  return document;
}

const SCHEMA_REF = '#/components/schemas/';

/**
 * Leaves out the component schemas no operation reaches. fastify-type-provider-zod emits each
 * registered schema twice, as a response (`Transfer`) and as a request (`TransferInput`), whether
 * or not any request uses it, and has no option to leave the unused copy out; ours are responses.
 */
function dropUnreferencedSchemas(document: OpenApiDocument): OpenApiDocument {
  const schemas = document.components?.schemas ?? {};
  const reached = new Set<string>();
  const visit = (value: unknown): void => {
    if (value === null || typeof value !== 'object') return;
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string' && child.startsWith(SCHEMA_REF)) {
        const name = child.slice(SCHEMA_REF.length);
        if (reached.has(name)) continue;
        reached.add(name);
        visit(schemas[name]);
      } else visit(child);
    }
  };
  visit({ ...document, components: { ...document.components, schemas: undefined } });
  for (const name of Object.keys(schemas)) if (!reached.has(name)) delete schemas[name];
  return document;
}
