import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import {
  ADMIN_HEADERS,
  type Caller,
  createTestApp,
  idempotencyKey,
  SOL_MINT,
  type TestApp,
} from '../helpers/app.ts';

/** Asserts the error envelope with this status, code and param, carrying the request's id. */
function assertRefused(response: LightMyRequestResponse, status: number, code: string, param?: string) {
  const context = response.body;
  assert.equal(response.statusCode, status, context);
  const body = response.json() as { error: Record<string, unknown> };
  assert.deepEqual(Object.keys(body), ['error'], context);
  assert.equal(body.error.code, code, context);
  assert.equal(body.error.param, param, context);
  assert.equal(body.error.requestId, response.headers['x-request-id'], context);
  return String(body.error.message);
}

const WALLET = 'Vote111111111111111111111111111111111111111';
const RECIPIENT = 'Stake11111111111111111111111111111111111111';
const createBody = (extra: object = {}) => ({
  tokenMint: SOL_MINT,
  amountRaw: '2000000000',
  amountTokens: '2',
  sourceOwner: WALLET,
  recipientWallet: RECIPIENT,
  hops: 3,
  ...extra,
});

describe('bad input is refused with the envelope, before it reaches the database', () => {
  let t: TestApp;
  let caller: Caller;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', { rateLimitMultiplier: 100 });
  });
  after(() => t.close());

  const admin = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) =>
    t.app.inject({
      method,
      url,
      headers: ADMIN_HEADERS,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const transferCount = async () =>
    (
      await t.database.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM transfers WHERE integration_id = $1',
        [caller.integrationId],
      )
    ).rows[0]!.n;

  test('a NUL character, in any string of body, path or query, is the field’s own error', async () => {
    const nul = 'must not contain the NUL character';
    const cases: [Promise<LightMyRequestResponse>, string, string][] = [
      [caller.post('/api/v1/transfers', createBody({ tokenSymbol: 'SO\u0000L' })), 'MH_016', 'tokenSymbol'],
      [caller.post('/api/v1/transfers', createBody({ externalId: 'order\u00001' })), 'MH_015', 'externalId'],
      [
        caller.post('/api/v1/transfers', createBody({ sourceOwner: `${WALLET}\u0000` })),
        'MH_011',
        'sourceOwner',
      ],
      [
        caller.post('/api/v1/transfers/estimate', { tokenMint: `\u0000${SOL_MINT}`, amountRaw: '1' }),
        'MH_010',
        'tokenMint',
      ],
      [caller.post('/api/v1/webhooks', { url: 'http://127.0.0.1:9/\u0000' }), 'MH_016', 'url'],
      [caller.get('/api/v1/transfers/by-external/order%001'), 'MH_016', 'externalId'],
      [caller.get('/api/v1/transfers?supportBundleId=TR%00'), 'MH_016', 'supportBundleId'],
      [caller.get('/api/v1/webhooks/1/deliveries?eventId=evt_%00'), 'MH_016', 'eventId'],
      [admin('POST', '/admin/v1/integrations', { name: 'acme\u0000' }), 'MH_016', 'name'],
      [
        admin('PATCH', `/admin/v1/integrations/${caller.integrationId}`, { name: '\u0000' }),
        'MH_016',
        'name',
      ],
      [
        admin('PATCH', `/admin/v1/integrations/${caller.integrationId}`, {
          settings: { fees: { tiers: [{ name: 'a\u0000', minUsd: '0', percentFeeBps: 1 }] } },
        }),
        'MH_016',
        'settings.fees.tiers.0.name',
      ],
    ];
    for (const [response, code, param] of cases)
      assert.match(assertRefused(await response, 400, code, param), new RegExp(nul));
    // In a name, too: the key is named as it was sent.
    const key = assertRefused(
      await admin('PATCH', `/admin/v1/integrations/${caller.integrationId}`, { settings: { 'a\u0000': 1 } }),
      400,
      'MH_016',
      'settings.a\u0000',
    );
    assert.match(key, /has a name that must not contain the NUL character/);
    assert.equal(await transferCount(), 0);
    assert.equal(
      (await admin('GET', `/admin/v1/integrations/${caller.integrationId}`)).json().name.includes('\u0000'),
      false,
    );
  });

  test('an unpaired surrogate would be stored altered, so it is refused too', async () => {
    const message = assertRefused(
      await caller.post('/api/v1/transfers', createBody({ tokenSymbol: 'A\ud800' })),
      400,
      'MH_016',
      'tokenSymbol',
    );
    assert.match(message, /well-formed Unicode/);
    assertRefused(await caller.get('/api/v1/transfers/by-external/a%ED%A0%80'), 400, 'MH_016');
    assert.equal(await transferCount(), 0);
  });

  test('ids are canonical decimal digits, in the public and the admin API', async () => {
    for (const id of ['0x1', '01', '+1', '1e0', '%201', '1%20', '1.0', '-1', '0', 'one']) {
      const transfer = assertRefused(
        await caller.get(`/api/v1/transfers/${id}`),
        400,
        'MH_016',
        'transferId',
      );
      assert.match(transfer, /positive integer in decimal digits/, id);
      assertRefused(await admin('GET', `/admin/v1/integrations/${id}`), 400, 'MH_016', 'id');
      assertRefused(await caller.delete(`/api/v1/webhooks/${id}`), 400, 'MH_016', 'endpointId');
      assertRefused(await caller.get(`/api/v1/events?transferId=${id}`), 400, 'MH_016', 'transferId');
    }
    for (const id of ['9007199254740992', '99999999999999999999', '9223372036854775808']) {
      const message = assertRefused(await caller.get(`/api/v1/transfers/${id}`), 400, 'MH_016', 'transferId');
      assert.match(message, /is larger than any id \(ids are at most 9007199254740991\)/);
    }
    assertRefused(await caller.get('/api/v1/transfers/9007199254740991'), 404, 'MH_030', 'transferId');
    assert.equal((await admin('GET', `/admin/v1/integrations/${caller.integrationId}`)).statusCode, 200);
    // In a JSON body an id is a number: not a string, not a boolean.
    for (const endpointId of ['1', true, [1], 1.5, 2 ** 53]) {
      assertRefused(
        await caller.post('/api/v1/events/evt_unknown/resend', { endpointId }),
        400,
        'MH_016',
        'endpointId',
      );
    }
  });

  test('page numbers are canonical decimal digits within their range', async () => {
    for (const value of ['1e1', '0x10', '010', '+5', '', '%205', '101']) {
      const message = assertRefused(
        await caller.get(`/api/v1/transfers?limit=${value}`),
        400,
        'MH_016',
        'limit',
      );
      assert.equal(message, 'Invalid query parameter `limit`: must be an integer from 1 to 100');
    }
    assertRefused(await caller.get('/api/v1/events?offset=-0'), 400, 'MH_016', 'offset');
    const page = await caller.get('/api/v1/transfers?limit=10&offset=0');
    assert.deepEqual(page.json().pagination, { total: 0, limit: 10, offset: 0, hasMore: false });
  });

  test('query strings: malformed encoding, repeats and undeclared parameters are refused', async () => {
    assert.match(
      assertRefused(await caller.get('/api/v1/transfers?externalId=%zz'), 400, 'MH_016', 'externalId'),
      /not valid percent-encoded UTF-8/,
    );
    assertRefused(await caller.get('/api/v1/transfers?externalId=%C3%28'), 400, 'MH_016', 'externalId');
    assert.match(
      assertRefused(await caller.get('/api/v1/transfers?limit=1&limit=2'), 400, 'MH_016', 'limit'),
      /given more than once/,
    );
    // Routes that declare no query parameters refuse any, like the others refuse unknown ones.
    assert.match(
      assertRefused(await caller.get('/api/v1/webhooks?verbose=1'), 400, 'MH_016', 'verbose'),
      /Unknown query parameter `verbose`/,
    );
    assertRefused(await caller.get('/api/v1/transfers/1?expand=recovery'), 400, 'MH_016', 'expand');
    assertRefused(await admin('GET', '/admin/v1/integrations?all=1'), 400, 'MH_016', 'all');
    // A "%" encoded as "%25" is an ordinary character.
    assert.deepEqual((await caller.get('/api/v1/transfers?externalId=%25zz')).json().items, []);
  });

  test('POSTs that take no body accept none or {}, and refuse anything else', async () => {
    for (const action of ['enable', 'test']) {
      const url = `/api/v1/webhooks/424242/${action}`;
      // Accepted: the answer is about the (unknown) endpoint.
      assertRefused(await caller.post(url), 404, 'MH_016', 'endpointId');
      assertRefused(await caller.post(url, {}), 404, 'MH_016', 'endpointId');
      assertRefused(await caller.post(url, { force: true }), 400, 'MH_016', 'force');
      assertRefused(await caller.post(url, [1]), 400, 'MH_016', 'body');
    }
    assertRefused(
      await t.app.inject({
        method: 'DELETE',
        url: '/api/v1/webhooks/424242',
        headers: caller.headers,
        payload: { cascade: true },
      }),
      400,
      'MH_016',
      'cascade',
    );
    const target = await t.createIntegration();
    assertRefused(
      await admin('POST', `/admin/v1/integrations/${target.id}/suspend`, { reason: 'x' }),
      400,
      'MH_016',
      'reason',
    );
    assert.equal((await admin('GET', `/admin/v1/integrations/${target.id}`)).json().status, 'active');
    assert.equal(
      (await admin('POST', `/admin/v1/integrations/${target.id}/suspend`, {})).json().status,
      'suspended',
    );
    assert.equal((await admin('POST', `/admin/v1/integrations/${target.id}/resume`)).json().status, 'active');
  });

  test('bodies that are not UTF-8 or nest too deep are refused before anything walks them', async () => {
    const post = (payload: string | Buffer) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks',
        headers: {
          ...caller.headers,
          'idempotency-key': idempotencyKey(),
          'content-type': 'application/json',
        },
        payload,
      });
    const latin1 = Buffer.from('{"url":"http://127.0.0.1:9/caf\xe9"}', 'latin1');
    assert.match(assertRefused(await post(latin1), 400, 'MH_016', 'body'), /not valid UTF-8/);
    const deep = (depth: number) => `{"url":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
    assert.match(assertRefused(await post(deep(33)), 400, 'MH_016', 'body'), /more than 32 levels deep/);
    assert.match(
      assertRefused(await post(`${'['.repeat(30_000)}${']'.repeat(30_000)}`), 400, 'MH_016', 'body'),
      /32 levels/,
    );
    // 32 levels are read, and refused by the field's own rule.
    assertRefused(await post(deep(32)), 400, 'MH_016', 'url');
    // Brackets inside strings are text, not nesting.
    assertRefused(await post(JSON.stringify({ url: '['.repeat(100) })), 400, 'MH_016', 'url');
  });

  test('a number far outside a field’s range is told the field’s own bounds', async () => {
    const hops = assertRefused(
      await caller.post('/api/v1/transfers', createBody({ hops: 1e308 })),
      400,
      'MH_013',
      'hops',
    );
    assert.match(hops, /<=10/);
    assert.doesNotMatch(hops, /9007199254740991/);
  });

  test('addresses are checked by @solana/kit: base58 text of exactly 32 bytes', async () => {
    const cases: [object, string, string][] = [
      [{ sourceOwner: 'z'.repeat(44) }, 'MH_011', 'sourceOwner'], // the right alphabet and length, 33 bytes
      [{ recipientWallet: '1'.repeat(31) }, 'MH_011', 'recipientWallet'],
      [{ recipientWallet: `${RECIPIENT}11` }, 'MH_011', 'recipientWallet'],
      [{ sourceOwner: 42 }, 'MH_016', 'sourceOwner'],
      [{ tokenMint: 'I'.repeat(32) }, 'MH_010', 'tokenMint'],
    ];
    for (const [extra, code, param] of cases) {
      assertRefused(await caller.post('/api/v1/transfers', createBody(extra)), 400, code, param);
    }
    // The system program's address (32 zero bytes) is a valid address.
    const zero = await caller.post('/api/v1/transfers', createBody({ recipientWallet: '1'.repeat(32) }));
    assert.equal(zero.statusCode, 200, zero.body);
  });

  test('the router’s own refusals, a malformed or over-long path, are the envelope too', async () => {
    const counted = async (status: number) => {
      const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
      const line = new RegExp(
        `http_requests_total\\{method="GET",route="unmatched",status="${status}"\\} (\\d+)`,
      );
      return Number(line.exec(metrics)?.[1] ?? 0);
    };
    const before = [await counted(400), await counted(414)];
    const malformed = await caller.get('/api/v1/transfers/by-external/%zz');
    assert.match(assertRefused(malformed, 400, 'MH_016'), /not valid percent-encoded UTF-8/);
    assertRefused(await caller.get(`/api/v1/transfers/by-external/${'a'.repeat(300)}`), 414, 'MH_016');
    // Counted like every answered request, though no hook ran for them.
    assert.deepEqual([await counted(400), await counted(414)], [before[0]! + 1, before[1]! + 1]);
    // Longer than the field allows but within the router's limit: the field's own error.
    assertRefused(
      await caller.get(`/api/v1/transfers/by-external/${'a'.repeat(129)}`),
      400,
      'MH_016',
      'externalId',
    );
  });
});
