import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateKeyPairSigner } from '@solana/kit';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { type Caller, createTestApp, createTransfer, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { startReceiver } from '../helpers/receiver.ts';

type Operation = {
  responses: Record<string, { content?: { 'application/json'?: { schema: object } } }>;
  parameters?: { name: string; in: string; required?: boolean }[];
};
type Document = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, object> };
};

describe('the OpenAPI document', () => {
  let t: TestApp;
  let caller: Caller;
  let document: Document;
  let ajv: Ajv2020;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', { rateLimitMultiplier: 100 });
    const response = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    assert.equal(response.statusCode, 200);
    document = response.json();
    ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'doc', components: document.components });
  });
  after(() => t.close());

  /** Validates a real response against the document's schema for its operation and status. */
  function assertConforms(method: string, path: string, response: LightMyRequestResponse) {
    const operation = document.paths[path]?.[method.toLowerCase()];
    assert.ok(operation, `${method} ${path} is documented`);
    const status = String(response.statusCode);
    const documented = operation.responses[status] ?? operation.responses[`${status[0]}XX`];
    assert.ok(documented, `${method} ${path} documents status ${status}`);
    const schema = documented.content?.['application/json']?.schema;
    assert.ok(schema, `${method} ${path} ${status} has a JSON schema`);
    const rebased = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/'));
    const validate = ajv.compile(rebased);
    assert.ok(
      validate(response.json()),
      `${method} ${path} ${status}: ${ajv.errorsText(validate.errors)}\n${response.body}`,
    );
  }

  test('is OpenAPI 3.1 and lists every public endpoint, without the admin API', () => {
    assert.equal(document.openapi, '3.1.0');
    const operations = Object.entries(document.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    for (const expected of [
      'POST /api/v1/transfers/estimate',
      'POST /api/v1/transfers',
      'GET /api/v1/transfers',
      'GET /api/v1/transfers/{transferId}',
      'GET /api/v1/transfers/by-external/{externalId}',
      'POST /api/v1/transfers/{transferId}/rescue/prepare',
      'POST /api/v1/transfers/{transferId}/rescue/confirm',
      'POST /api/v1/transfers/{transferId}/reclaim-rent/prepare',
      'POST /api/v1/transfers/{transferId}/reclaim-rent/confirm',
      'POST /api/v1/webhooks',
      'GET /api/v1/webhooks',
      'DELETE /api/v1/webhooks/{endpointId}',
      'GET /api/v1/usage',
      'GET /api/v1/rewards',
      'POST /api/v1/rewards/wallet',
      'GET /api/v1/rewards/claims',
      'POST /api/v1/rewards/claim',
      'GET /healthz',
      'GET /readyz',
    ]) {
      assert.ok(operations.includes(expected), `${expected} is documented`);
    }
    assert.ok(!operations.some((operation) => operation.includes('/admin/')));
  });

  test('POSTs document the Idempotency-Key header: required, except on the estimate', () => {
    const header = (path: string) =>
      document.paths[path]!.post!.parameters?.find((p) => p.name === 'Idempotency-Key');
    assert.equal(header('/api/v1/transfers')?.required, true);
    assert.equal(header('/api/v1/webhooks')?.required, true);
    assert.equal(header('/api/v1/transfers/estimate')?.required, false);
  });

  test('addresses and ids are documented with the rules the server applies', () => {
    type Schema = { properties: Record<string, object> };
    const bodyOf = (path: string) =>
      (
        document.paths[path]!.post as unknown as {
          requestBody: { content: { 'application/json': { schema: Schema } } };
        }
      ).requestBody.content['application/json'].schema;
    const address = { type: 'string', minLength: 32, maxLength: 44, pattern: '^[1-9A-HJ-NP-Za-km-z]+$' };
    const create = bodyOf('/api/v1/transfers').properties;
    for (const field of ['tokenMint', 'sourceOwner', 'recipientWallet']) {
      assert.deepEqual(
        { ...create[field], description: undefined },
        { ...address, description: undefined },
        field,
      );
    }
    assert.deepEqual(
      { ...bodyOf('/api/v1/transfers/estimate').properties.tokenMint, description: undefined },
      { ...address, description: undefined },
    );
    const id = (document.paths['/api/v1/transfers/{transferId}']!.get!.parameters ?? []).find(
      (parameter) => parameter.name === 'transferId',
    ) as unknown as { schema: object };
    assert.deepEqual(id.schema, { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
  });

  test('bodies are documented as required only where the server requires one', () => {
    const required = (path: string) =>
      (document.paths[path]!.post as unknown as { requestBody?: { required: boolean } }).requestBody
        ?.required;
    assert.equal(required('/api/v1/transfers'), true);
    assert.equal(required('/api/v1/webhooks'), true);
    assert.equal(required('/api/v1/transfers/{transferId}/rescue/confirm'), true);
    assert.equal(required('/api/v1/transfers/{transferId}/reclaim-rent/confirm'), true);
    for (const path of [
      '/api/v1/webhooks/{endpointId}/rotate-secret',
      '/api/v1/webhooks/{endpointId}/enable',
      '/api/v1/webhooks/{endpointId}/test',
      '/api/v1/events/{eventId}/resend',
      '/api/v1/transfers/{transferId}/rescue/prepare',
      '/api/v1/transfers/{transferId}/reclaim-rent/prepare',
    ]) {
      assert.equal(required(path), false, path);
    }
    assert.ok(!JSON.stringify(document).includes('x-optional-body'));
  });

  test('real responses, successes and errors, match the documented schemas', async () => {
    const mint = await createMint(t.chain, { decimals: 6 });
    const source = (await generateKeyPairSigner()).address;
    const recipient = (await generateKeyPairSigner()).address;
    const receiver = await startReceiver();
    try {
      const checks: [string, string, LightMyRequestResponse][] = [];
      const check = (method: string, path: string, response: LightMyRequestResponse) =>
        checks.push([method, path, response]);

      check(
        'POST',
        '/api/v1/transfers/estimate',
        await caller.post('/api/v1/transfers/estimate', {
          tokenMint: mint,
          amountRaw: '5000000',
          tokenPriceUsd: 1,
        }),
      );
      check(
        'POST',
        '/api/v1/transfers/estimate',
        await caller.post('/api/v1/transfers/estimate', { tokenMint: mint, amountRaw: '5' }),
      );
      const created = await caller.post('/api/v1/transfers', {
        tokenMint: mint,
        amountRaw: '5000000',
        amountTokens: '5',
        sourceOwner: source,
        recipientWallet: recipient,
        tokenPriceUsd: 1,
        externalId: 'doc-1',
      });
      check('POST', '/api/v1/transfers', created);
      check('POST', '/api/v1/transfers', await caller.post('/api/v1/transfers', { tokenMint: mint }));
      const id = created.json().id;
      check('GET', '/api/v1/transfers/{transferId}', await caller.get(`/api/v1/transfers/${id}`));
      check('GET', '/api/v1/transfers/{transferId}', await caller.get('/api/v1/transfers/999999'));
      check(
        'GET',
        '/api/v1/transfers/by-external/{externalId}',
        await caller.get('/api/v1/transfers/by-external/doc-1'),
      );
      check('GET', '/api/v1/transfers', await caller.get('/api/v1/transfers?limit=5'));
      check('GET', '/api/v1/transfers', await caller.get('/api/v1/transfers?limit=500'));
      const hook = await caller.post('/api/v1/webhooks', { url: receiver.url });
      check('POST', '/api/v1/webhooks', hook);
      check(
        'POST',
        '/api/v1/webhooks',
        await caller.post('/api/v1/webhooks', { url: 'http://127.0.0.1:9/x' }),
      );
      check('GET', '/api/v1/webhooks', await caller.get('/api/v1/webhooks'));
      check(
        'DELETE',
        '/api/v1/webhooks/{endpointId}',
        await caller.delete(`/api/v1/webhooks/${hook.json().id}`),
      );
      check('GET', '/api/v1/usage', await caller.get('/api/v1/usage'));
      check('GET', '/healthz', await t.app.inject({ method: 'GET', url: '/healthz' }));
      check('GET', '/readyz', await t.app.inject({ method: 'GET', url: '/readyz' }));

      for (const [method, path, response] of checks) assertConforms(method, path, response);
      assert.deepEqual(
        checks.map(([, , response]) => response.statusCode),
        [200, 400, 200, 400, 200, 404, 200, 200, 400, 200, 400, 200, 200, 200, 200, 200],
      );
    } finally {
      await receiver.close();
    }
  });

  test('the webhook and event tools answer as documented', async () => {
    const receiver = await startReceiver();
    try {
      const endpoint = (await caller.post('/api/v1/webhooks', { url: receiver.url })).json();
      await createTransfer(caller);
      const events = await caller.get('/api/v1/events');
      const eventId = events.json().items[0].id;
      const base = `/api/v1/webhooks/${endpoint.id}`;
      const checks: [string, string, LightMyRequestResponse][] = [
        ['GET', '/api/v1/events', events],
        ['GET', '/api/v1/events', await caller.get('/api/v1/events?limit=0')],
        [
          'POST',
          '/api/v1/events/{eventId}/resend',
          await caller.post(`/api/v1/events/${eventId}/resend`, {}),
        ],
        [
          'POST',
          '/api/v1/events/{eventId}/resend',
          await caller.post('/api/v1/events/evt_unknown/resend', {}),
        ],
        ['POST', '/api/v1/webhooks/{endpointId}/test', await caller.post(`${base}/test`)],
        ['GET', '/api/v1/webhooks/{endpointId}/deliveries', await caller.get(`${base}/deliveries`)],
        [
          'GET',
          '/api/v1/webhooks/{endpointId}/deliveries',
          await caller.get('/api/v1/webhooks/999999/deliveries'),
        ],
        [
          'POST',
          '/api/v1/webhooks/{endpointId}/rotate-secret',
          await caller.post(`${base}/rotate-secret`, {}),
        ],
        ['POST', '/api/v1/webhooks/{endpointId}/enable', await caller.post(`${base}/enable`)],
      ];
      for (const [method, path, response] of checks) assertConforms(method, path, response);
      assert.deepEqual(
        checks.map(([, , response]) => response.statusCode),
        [200, 400, 200, 404, 200, 200, 404, 200, 200],
      );
    } finally {
      await receiver.close();
    }
  });

  test('the rewards endpoints answer as documented', async () => {
    const rewardsCaller = await t.newCaller('test', { rateLimitMultiplier: 100 });
    const wallet = (await generateKeyPairSigner()).address;
    const checks: [string, string, LightMyRequestResponse][] = [
      ['GET', '/api/v1/rewards', await rewardsCaller.get('/api/v1/rewards')],
      ['POST', '/api/v1/rewards/claim', await rewardsCaller.post('/api/v1/rewards/claim', {})],
      ['POST', '/api/v1/rewards/wallet', await rewardsCaller.post('/api/v1/rewards/wallet', { wallet })],
      ['POST', '/api/v1/rewards/wallet', await rewardsCaller.post('/api/v1/rewards/wallet', { wallet: 'x' })],
      ['POST', '/api/v1/rewards/claim', await rewardsCaller.post('/api/v1/rewards/claim')],
      ['GET', '/api/v1/rewards/claims', await rewardsCaller.get('/api/v1/rewards/claims?limit=5')],
      ['GET', '/api/v1/rewards/claims', await rewardsCaller.get('/api/v1/rewards/claims?limit=500')],
    ];
    for (const [method, path, response] of checks) assertConforms(method, path, response);
    assert.deepEqual(
      checks.map(([, , response]) => response.statusCode),
      [200, 400, 200, 400, 400, 200, 400],
    );
  });

  test('the docs page is served', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/docs/' });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /swagger/i);
  });
});
