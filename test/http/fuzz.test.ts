import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import {
  ADMIN_HEADERS,
  type Caller,
  createTestApp,
  createTransfer,
  SOL_MINT,
  type TestApp,
} from '../helpers/app.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

/**
 * Property: whatever arrives (random and mutated paths, query strings, headers and bodies), no
 * endpoint of the public or the admin API answers 5xx, and every error is the envelope whose
 * requestId is the X-Request-Id header. Seeded from valid requests so that mutations reach deep
 * into validation and the handlers, not only the router.
 */

type Fixtures = {
  transferId: number;
  externalId: string;
  endpointId: number;
  eventId: string;
  integrationId: number;
  keyId: number;
};

type Endpoint = {
  method: string;
  /** With `{name}` path parameters. */
  path: string;
  query: { name: string; valid: fc.Arbitrary<string> }[];
  /** A valid body, whose fields the fuzzer mutates. */
  body?: Record<string, unknown>;
  admin?: boolean;
};

const WALLET = 'Vote111111111111111111111111111111111111111';
const RECIPIENT = 'Stake11111111111111111111111111111111111111';
const isoDate = fc
  .date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true })
  .map((date) => date.toISOString());
const limit = { name: 'limit', valid: fc.integer({ min: 1, max: 100 }).map(String) };
const offset = { name: 'offset', valid: fc.integer({ min: 0, max: 50 }).map(String) };

function endpoints(): Endpoint[] {
  const pricing = { tokenMint: SOL_MINT, amountRaw: '2000000000', hops: 3 };
  return [
    { method: 'POST', path: '/api/v1/transfers/estimate', query: [], body: pricing },
    {
      method: 'POST',
      path: '/api/v1/transfers',
      query: [],
      body: {
        ...pricing,
        amountTokens: '2',
        sourceOwner: WALLET,
        recipientWallet: RECIPIENT,
        tokenSymbol: 'SOL',
        tokenDecimals: 9,
        tokenPriceUsd: 150,
        arrivalSeconds: 600,
        externalId: 'fuzz-ext-2',
      },
    },
    {
      method: 'GET',
      path: '/api/v1/transfers',
      query: [
        { name: 'status', valid: fc.constantFrom('quote', 'completed') },
        { name: 'fromDate', valid: isoDate },
        { name: 'toDate', valid: isoDate },
        { name: 'externalId', valid: fc.constantFrom('fuzz-ext-1') },
        { name: 'supportBundleId', valid: fc.constantFrom('TR-1') },
        limit,
        offset,
      ],
    },
    { method: 'GET', path: '/api/v1/transfers/{transferId}', query: [] },
    { method: 'GET', path: '/api/v1/transfers/by-external/{externalId}', query: [] },
    { method: 'POST', path: '/api/v1/transfers/{transferId}/prepare', query: [], body: {} },
    {
      method: 'POST',
      path: '/api/v1/transfers/{transferId}/confirm-broadcast',
      query: [],
      body: { routeInitSignatures: [] },
    },
    { method: 'POST', path: '/api/v1/transfers/{transferId}/funding/refresh', query: [], body: {} },
    {
      method: 'POST',
      path: '/api/v1/transfers/{transferId}/funding/confirm',
      query: [],
      body: { timeoutSeconds: 1 },
    },
    { method: 'POST', path: '/api/v1/transfers/{transferId}/rescue/prepare', query: [], body: {} },
    { method: 'POST', path: '/api/v1/transfers/{transferId}/reclaim-rent/prepare', query: [], body: {} },
    {
      method: 'POST',
      path: '/api/v1/transfers/{transferId}/reclaim-rent/confirm',
      query: [],
      body: {
        reclaimSignatures: [
          '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW',
        ],
      },
    },
    {
      method: 'POST',
      path: '/api/v1/transfers/{transferId}/rescue/confirm',
      query: [],
      body: {
        rescueSignatures: [
          '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW',
        ],
      },
    },
    { method: 'POST', path: '/api/v1/webhooks', query: [], body: { url: 'RECEIVER', events: '*' } },
    { method: 'GET', path: '/api/v1/webhooks', query: [] },
    { method: 'DELETE', path: '/api/v1/webhooks/{endpointId}', query: [] },
    {
      method: 'POST',
      path: '/api/v1/webhooks/{endpointId}/rotate-secret',
      query: [],
      body: { overlapSeconds: 60 },
    },
    { method: 'POST', path: '/api/v1/webhooks/{endpointId}/enable', query: [], body: {} },
    { method: 'POST', path: '/api/v1/webhooks/{endpointId}/test', query: [], body: {} },
    {
      method: 'GET',
      path: '/api/v1/webhooks/{endpointId}/deliveries',
      query: [{ name: 'success', valid: fc.constantFrom('true', 'false') }, limit, offset],
    },
    {
      method: 'GET',
      path: '/api/v1/events',
      query: [
        { name: 'type', valid: fc.constantFrom('transfer.quote_created') },
        { name: 'transferId', valid: fc.constantFrom('1') },
        { name: 'deliverySuccess', valid: fc.constantFrom('true', 'false') },
        limit,
        offset,
      ],
    },
    { method: 'POST', path: '/api/v1/events/{eventId}/resend', query: [], body: { endpointId: 1 } },
    {
      method: 'GET',
      path: '/api/v1/usage',
      query: [
        { name: 'fromDate', valid: isoDate },
        { name: 'toDate', valid: isoDate },
      ],
    },
    { method: 'GET', path: '/api/v1/rewards', query: [] },
    { method: 'POST', path: '/api/v1/rewards/wallet', query: [], body: { wallet: WALLET } },
    { method: 'POST', path: '/api/v1/rewards/claim', query: [], body: {} },
    { method: 'GET', path: '/api/v1/rewards/claims', query: [limit, offset] },
    {
      method: 'POST',
      path: '/admin/v1/integrations',
      query: [],
      body: { name: 'fuzzed', settings: { defaultHops: 5 } },
      admin: true,
    },
    { method: 'GET', path: '/admin/v1/integrations', query: [], admin: true },
    { method: 'GET', path: '/admin/v1/integrations/{id}', query: [], admin: true },
    {
      method: 'PATCH',
      path: '/admin/v1/integrations/{id}',
      query: [],
      body: { name: 'renamed', settings: { defaultArrivalSeconds: 900, fees: { minUsd: '2' } } },
      admin: true,
    },
    { method: 'POST', path: '/admin/v1/integrations/{id}/suspend', query: [], body: {}, admin: true },
    { method: 'POST', path: '/admin/v1/integrations/{id}/resume', query: [], body: {}, admin: true },
    {
      method: 'POST',
      path: '/admin/v1/integrations/{id}/keys',
      query: [],
      body: { mode: 'test' },
      admin: true,
    },
    { method: 'GET', path: '/admin/v1/integrations/{id}/keys', query: [], admin: true },
    { method: 'POST', path: '/admin/v1/keys/{id}/revoke', query: [], body: {}, admin: true },
    { method: 'GET', path: '/admin/v1/integrations/{id}/rewards', query: [], admin: true },
    { method: 'GET', path: '/admin/v1/rewards/coverage', query: [], admin: true },
  ];
}

/** Text that has broken services before: NUL, surrogates, encodings, number look-alikes, size. */
const nastyText = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '%',
  '%zz',
  '%00',
  '%C3%28',
  '%ED%A0%80',
  '%F0%9F%99%82',
  '0',
  '-1',
  ' 1',
  '01',
  '+1',
  '1e0',
  '0x1',
  '1.0',
  '1_000',
  '9007199254740991',
  '9007199254740992',
  '99999999999999999999',
  '9223372036854775808',
  'NaN',
  'Infinity',
  'null',
  'true',
  '[]',
  '{}',
  '__proto__',
  'constructor',
  '🙂',
  'é',
  '\u202e',
  "' OR 1=1 --",
  '../../etc/passwd',
  'a'.repeat(129),
  'a'.repeat(250),
  'a'.repeat(5000),
);
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit));
const anyText = fc.oneof(
  { weight: 3, arbitrary: nastyText },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  {
    weight: 1,
    arbitrary: fc.string({
      unit: fc.oneof(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }), loneSurrogate),
    }),
  },
);

/** A valid text with something slipped in: what gets past validation that only checks the shape. */
const spoiled = (valid: string) =>
  fc
    .tuple(
      fc.nat({ max: valid.length }),
      fc.oneof(
        { weight: 3, arbitrary: fc.constant('\u0000') },
        { weight: 2, arbitrary: fc.constantFrom('\ud800', '\udc00', '%00', '🙂', ' ') },
      ),
    )
    .map(([at, insert]) => `${valid.slice(0, at)}${insert}${valid.slice(at)}`);

/** A value placed in a path or query: sent as is when it is plain URL text, else percent-encoded. */
const urlText = (text: string) =>
  /^[\x21-\x7e]*$/.test(text) && !/[?#&=/]/.test(text)
    ? text
    : encodeURIComponent(text.toWellFormed()).replaceAll('%2F', '/');

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const jsonJunk: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  anyText,
  fc.constantFrom(0, -1, 1.5, -0, 1e308, -1e308, 5e-324, 2 ** 53, 2 ** 53 + 2, 2 ** 63, 1e21, true, null),
  fc.array(anyText, { maxLength: 3 }),
  fc.dictionary(anyText, anyText, { maxKeys: 3 }),
  fc.integer({ min: 1, max: 60 }).map((depth) => JSON.parse(nested(depth))),
);
/** Body texts JSON.stringify cannot produce. */
const rawBodies = fc.oneof(
  fc.constantFrom(
    '',
    '   ',
    '{',
    '{"a":',
    'nul',
    '[1,]',
    '{"a":1,}',
    "{'a':1}",
    '{"__proto__":{"x":1}}',
    '{"constructor":{"prototype":{}}}',
    '{"hops":1e400}',
    '{"hops":123456789012345678901234567890}',
    '{"amountRaw":-0.0}',
    '\ufeff{}',
    '{"a":"\\ud800"}',
    '{"a":"\\u0000"}',
  ),
  fc.string({ maxLength: 200 }),
  fc.json({ maxDepth: 4 }),
);

type FuzzedRequest = {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
};

function requestArbitrary(endpoint: Endpoint, fixtures: Fixtures, receiverUrl: string) {
  const validParams: Record<string, fc.Arbitrary<string>> = {
    transferId: fc.constantFrom(String(fixtures.transferId), '1'),
    externalId: fc.constantFrom(fixtures.externalId),
    endpointId: fc.constantFrom(String(fixtures.endpointId)),
    eventId: fc.constantFrom(fixtures.eventId, 'evt_unknown'),
    id: fc.constantFrom(String(fixtures.integrationId), String(fixtures.keyId)),
  };
  const paramValue = (name: string) => {
    const valid = validParams[name] ?? fc.constant('1');
    return fc.oneof(
      { weight: 8, arbitrary: valid },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 2 ** 31 + 1 }).map(String) },
      { weight: 2, arbitrary: valid.chain(spoiled).map(urlText) },
      { weight: 3, arbitrary: anyText.map(urlText) },
    );
  };
  const names = [...endpoint.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
  const path = fc
    .tuple(
      fc.tuple(...names.map(paramValue)),
      fc.oneof(
        { weight: 10, arbitrary: fc.constant('') },
        { weight: 2, arbitrary: fc.constantFrom('/', '//', '/extra', '/%zz', '/..', `/${'a'.repeat(300)}`) },
      ),
    )
    .map(([values, suffix]) => {
      let filled = endpoint.path;
      names.forEach((name, index) => {
        filled = filled.replace(`{${name}}`, values[index] || '%20');
      });
      return `${filled}${suffix}`;
    });

  const knownNames = endpoint.query.map((parameter) => parameter.name);
  const queryPair = fc.oneof(
    ...endpoint.query.map((parameter) => ({
      weight: 2,
      arbitrary: fc
        .oneof(parameter.valid, parameter.valid.chain(spoiled))
        .map((value) => `${parameter.name}=${urlText(value)}`),
    })),
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom(...knownNames, 'unknown', 'limit', '__proto__'), anyText)
        .map(([name, value]) => `${name}=${urlText(value)}`),
    },
    { weight: 1, arbitrary: fc.constantFrom('%zz=1', '=', '&', 'a', 'a=%', 'limit=1&limit=2', '%00=x') },
  );
  const query = fc.oneof(
    { weight: 2, arbitrary: fc.constant('') },
    {
      weight: 1,
      arbitrary: fc.array(queryPair, { minLength: 1, maxLength: 4 }).map((pairs) => `?${pairs.join('&')}`),
    },
  );

  const valid: Record<string, unknown> = JSON.parse(
    JSON.stringify(endpoint.body ?? {}).replace('RECEIVER', receiverUrl),
  );
  const fields = Object.keys(valid);
  const stringFields = fields.filter((field) => typeof valid[field] === 'string');
  const fieldValue = (field: string) =>
    typeof valid[field] === 'string' ? fc.oneof(spoiled(valid[field] as string), jsonJunk) : jsonJunk;
  const mutation = fc
    .constantFrom(...fields, 'unknownField', '__proto__')
    .chain((field) => fieldValue(field).map((value) => [field, value] as const));
  const body: fc.Arbitrary<string | undefined> = fc.oneof(
    { weight: 6, arbitrary: fc.constant(JSON.stringify(valid)) },
    {
      weight: 5,
      arbitrary: fc
        .array(mutation, { minLength: 1, maxLength: 3 })
        .map((changes) => JSON.stringify({ ...valid, ...Object.fromEntries(changes) })),
    },
    ...(stringFields.length === 0
      ? []
      : [
          {
            weight: 3,
            arbitrary: fc
              .constantFrom(...stringFields)
              .chain((field) =>
                spoiled(valid[field] as string).map((value) => ({ ...valid, [field]: value })),
              )
              .map((changed) => JSON.stringify(changed)),
          },
        ]),
    {
      weight: 1,
      arbitrary: fc
        .subarray(fields)
        .map((kept) => JSON.stringify(Object.fromEntries(kept.map((field) => [field, valid[field]])))),
    },
    { weight: 1, arbitrary: jsonJunk.map((value) => JSON.stringify(value) ?? 'null') },
    { weight: 2, arbitrary: rawBodies },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(33, 1_000, 30_000)
        .chain((depth) => fc.constantFrom(nested(depth), `{"${fields[0] ?? 'a'}":${nested(depth)}}`)),
    },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );

  const credentials = endpoint.admin
    ? fc.oneof(
        { weight: 18, arbitrary: fc.constant(ADMIN_HEADERS) },
        { weight: 1, arbitrary: fc.constant({ authorization: 'Bearer wrong-token' }) },
        { weight: 1, arbitrary: fc.constant({}) },
      )
    : fc.constant({});
  const headers = fc.record(
    {
      'content-type': fc.oneof(
        { weight: 12, arbitrary: fc.constant('application/json') },
        {
          weight: 2,
          arbitrary: fc.constantFrom(
            'application/json; charset=utf-8',
            'text/plain',
            'application/x-www-form-urlencoded',
            'application/json, text/plain',
            'application/jsonx',
            ';',
          ),
        },
      ),
      'idempotency-key': fc.oneof(
        { weight: 12, arbitrary: fc.uuid().map((uuid) => `fuzz-${uuid}`) },
        {
          weight: 1,
          arbitrary: fc.constantFrom('short', 'fuzz-reused-key', 'bad key with spaces', 'k'.repeat(65)),
        },
      ),
      'x-request-id': fc.constantFrom('trace.fuzz-0001', 'bad id!', 'x'.repeat(80)),
      accept: fc.constantFrom('application/json', 'text/html', '*/*', ''),
    },
    { requiredKeys: ['content-type'] },
  );
  const method = fc.oneof(
    { weight: 19, arbitrary: fc.constant(endpoint.method) },
    { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD') },
  );

  return fc.record({ method, path, query, body, headers, credentials }).map(
    ({ method, path, query, body, headers, credentials }): FuzzedRequest => ({
      method,
      url: `${path}${query}`,
      headers: { ...headers, ...credentials },
      ...(body === undefined ? {} : { payload: body }),
    }),
  );
}

/** The invariant: no 5xx, and every error is the envelope carrying the request's id. */
function assertWellAnswered(request: FuzzedRequest, response: LightMyRequestResponse) {
  const context = `${request.method} ${request.url} ${JSON.stringify(request.payload)} -> ${response.statusCode} ${response.body.slice(0, 300)}`;
  assert.ok(response.statusCode < 500, context);
  const requestId = response.headers['x-request-id'];
  assert.equal(typeof requestId, 'string', context);
  if (response.statusCode < 400 || request.method === 'HEAD') return;
  assert.match(String(response.headers['content-type']), /^application\/json/, context);
  const body = response.json() as { error: Record<string, unknown> };
  assert.deepEqual(Object.keys(body), ['error'], context);
  assert.match(String(body.error.code), /^MH_\d{3}$/, context);
  assert.ok(typeof body.error.message === 'string' && body.error.message.length > 0, context);
  // A replay is the first answer byte for byte, so its envelope names the request that ran.
  if (response.headers['idempotent-replayed'] === 'true') assert.equal(typeof body.error.requestId, 'string');
  else assert.equal(body.error.requestId, requestId, context);
  assert.ok(body.error.param === undefined || typeof body.error.param === 'string', context);
}

describe('fuzzed requests to every endpoint', () => {
  let t: TestApp;
  let caller: Caller;
  let receiver: Receiver;
  let fixtures: Fixtures;
  before(async () => {
    t = await createTestApp({ config: { webhookPingTimeoutMs: 300 } });
    receiver = await startReceiver();
    caller = await t.newCaller('test', { rateLimitMultiplier: 100_000 });
    const transfer = await createTransfer(caller, 'fuzz-ext-1');
    const endpoint = (await caller.post('/api/v1/webhooks', { url: receiver.url })).json();
    const events = (await caller.get('/api/v1/events')).json();
    fixtures = {
      transferId: transfer.id,
      externalId: 'fuzz-ext-1',
      endpointId: endpoint.id,
      eventId: events.items[0].id,
      integrationId: caller.integrationId,
      keyId: caller.keyId,
    };
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  const fuzz = async (admin: boolean, numRuns: number) => {
    const requests = fc.oneof(
      ...endpoints()
        .filter((endpoint) => Boolean(endpoint.admin) === admin)
        .map((endpoint) => requestArbitrary(endpoint, fixtures, receiver.url)),
    );
    let succeeded = 0;
    await fc.assert(
      fc.asyncProperty(requests, async (request) => {
        const headers = admin ? request.headers : { ...caller.headers, ...request.headers };
        const response = await t.app.inject({ ...request, headers });
        assertWellAnswered(request, response);
        if (response.statusCode < 300) succeeded++;
      }),
      { numRuns },
    );
    // Mutations start from valid requests, so a share of them pass validation and reach the
    // handlers (and the database) rather than all stopping at the router.
    assert.ok(succeeded >= numRuns * 0.05, `${succeeded} of ${numRuns} requests succeeded`);
  };

  test('every operation of the API in the OpenAPI document is fuzzed', () => {
    const fuzzed = endpoints()
      .filter((endpoint) => !endpoint.admin)
      .map((endpoint) => `${endpoint.method} ${endpoint.path}`)
      .sort();
    const paths = (t.app.swagger() as { paths: Record<string, Record<string, unknown>> }).paths;
    const documented = Object.entries(paths)
      .filter(([path]) => path.startsWith('/api/v1/'))
      .flatMap(([path, operations]) =>
        Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
      )
      .sort();
    assert.deepEqual(fuzzed, documented);
  });

  test('the public API', () => fuzz(false, 1000));

  // After the public API: the admin fuzzer may suspend the caller's integration or revoke its key.
  test('the admin API', () => fuzz(true, 500));
});
