import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { hang, json, startTestServer, type TestServer } from '../../test/helpers/http-server.ts';
import { createManualClock } from '../domain/clock.ts';
import { createJupiterSource } from './jupiter.ts';

const JUP = 'JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN';
const BONK = 'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263';

// The shape Jupiter's Price API V3 answers with.
const jupEntry = {
  createdAt: '2024-06-05T08:55:25.527Z',
  liquidity: 621679197.67,
  usdPrice: 0.4056018512541055,
  blockId: 348004026,
  decimals: 6,
  priceChange24h: 0.5292887924920519,
};

describe('Jupiter source', () => {
  let server: TestServer;
  let clock: ReturnType<typeof createManualClock>;
  let warnings: string[];
  const source = (extra: { apiKey?: string; timeoutMs?: number } = {}) =>
    createJupiterSource({
      baseUrl: server.url,
      clock,
      log: { warn: (_details, message) => warnings.push(message) },
      ...extra,
    });

  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
    clock = createManualClock(new Date('2026-01-01T00:00:00Z'));
    warnings = [];
  });

  test('reads usdPrice from /price/v3 and stamps the arrival time', async () => {
    server.answer(json(200, { [JUP]: jupEntry }));
    const quote = await source({ apiKey: 'jup-key' }).getUsdPrice(JUP);
    assert.deepEqual(quote, {
      mint: JUP,
      priceUsd: '0.4056018512541055',
      source: 'jupiter',
      observedAt: new Date('2026-01-01T00:00:00Z'),
    });
    assert.equal(server.requests.length, 1);
    assert.equal(server.requests[0]?.path, `/price/v3?ids=${JUP}`);
    assert.equal(server.requests[0]?.headers['x-api-key'], 'jup-key');
    assert.deepEqual(warnings, []);
  });

  test('a mint Jupiter leaves out of its answer has no price', async () => {
    server.answer(json(200, {}));
    assert.equal(await source().getUsdPrice(BONK), null);
    server.answer(json(200, { [BONK]: null }));
    assert.equal(await source().getUsdPrice(BONK), null);
    server.answer(json(200, { [JUP]: jupEntry }));
    assert.equal(await source().getUsdPrice(BONK), null);
    assert.equal(server.requests[0]?.headers['x-api-key'], undefined);
    assert.deepEqual(warnings, []);
  });

  test('error statuses are no price', async () => {
    for (const status of [500, 503, 401, 400]) {
      server.answer(json(status, { error: 'nope' }));
      assert.equal(await source().getUsdPrice(JUP), null, String(status));
    }
    assert.equal(warnings.length, 4);
  });

  test('429 without Retry-After pauses the provider for 30 s', async () => {
    const jupiter = source();
    server.answer(json(429, { message: 'Too many requests' }));
    assert.equal(await jupiter.getUsdPrice(JUP), null);
    server.answer(json(200, { [JUP]: jupEntry }));
    clock.advance(29_999);
    assert.equal(await jupiter.getUsdPrice(JUP), null);
    assert.equal(server.requests.length, 1);
    clock.advance(1);
    assert.equal((await jupiter.getUsdPrice(JUP))?.priceUsd, '0.4056018512541055');
  });

  test('malformed JSON and missing or mistyped fields are no price', async () => {
    const answers: unknown[] = [
      '{"JUP',
      '<html>bad gateway</html>',
      'null',
      [jupEntry],
      { [JUP]: 'price' },
      { [JUP]: { ...jupEntry, usdPrice: undefined } },
      { [JUP]: { ...jupEntry, usdPrice: '0.40' } },
      { [JUP]: { ...jupEntry, usdPrice: null } },
      { [JUP]: { ...jupEntry, usdPrice: 0 } },
      { [JUP]: { ...jupEntry, usdPrice: -0.4 } },
      { data: { [JUP]: { id: JUP, price: '0.40' } } }, // the retired V2 format
    ];
    for (const body of answers) {
      server.answer(json(200, body));
      assert.equal(await source().getUsdPrice(JUP), null, JSON.stringify(body));
    }
    assert.equal(server.requests.length, answers.length);
  });

  test('a provider that does not answer in time is no price', async () => {
    server.answer(hang());
    assert.equal(await source({ timeoutMs: 50 }).getUsdPrice(JUP), null);
    assert.deepEqual(warnings, ['price provider request failed']);
  });

  test('a body that stalls after the headers times out too', async () => {
    server.answer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write(`{"${JUP}": {"usdPrice": 0.4`);
    });
    assert.equal(await source({ timeoutMs: 50 }).getUsdPrice(JUP), null);
    assert.deepEqual(warnings, ['price provider request failed']);
  });
});
