import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { hang, json, startTestServer, type TestServer } from '../../test/helpers/http-server.ts';
import { createManualClock } from '../domain/clock.ts';
import { createCoinGeckoSource } from './coingecko.ts';
import { NATIVE_SOL_MINT } from './types.ts';

const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const UPDATED_AT = 1_767_225_590; // 2025-12-31T23:59:50Z

describe('CoinGecko source', () => {
  let server: TestServer;
  let clock: ReturnType<typeof createManualClock>;
  let warnings: string[];
  const source = (extra: { apiKey?: string; timeoutMs?: number; baseUrl?: string } = {}) =>
    createCoinGeckoSource({
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

  test('reads SOL/USD and its update time from /api/v3/simple/price', async () => {
    server.answer(json(200, { solana: { usd: 147.48, last_updated_at: UPDATED_AT } }));
    const quote = await source({ apiKey: 'cg-key' }).getUsdPrice(NATIVE_SOL_MINT);
    assert.deepEqual(quote, {
      mint: NATIVE_SOL_MINT,
      priceUsd: '147.48',
      source: 'coingecko',
      observedAt: new Date('2025-12-31T23:59:50Z'),
    });
    assert.equal(server.requests.length, 1);
    assert.equal(
      server.requests[0]?.path,
      '/api/v3/simple/price?ids=solana&vs_currencies=usd&include_last_updated_at=true',
    );
    assert.equal(server.requests[0]?.headers['x-cg-demo-api-key'], 'cg-key');
    assert.equal(server.requests[0]?.headers.accept, 'application/json');
  });

  test('sends no key header without a key, and keeps a base URL path prefix', async () => {
    server.answer(json(200, { solana: { usd: 1e-7, last_updated_at: UPDATED_AT } }));
    const quote = await source({ baseUrl: `${server.url}/proxy/` }).getUsdPrice(NATIVE_SOL_MINT);
    assert.equal(quote?.priceUsd, '0.0000001');
    assert.equal(server.requests[0]?.path.startsWith('/proxy/api/v3/simple/price?'), true);
    assert.equal(server.requests[0]?.headers['x-cg-demo-api-key'], undefined);
  });

  test('does not ask about mints it has no coin id for', async () => {
    assert.equal(await source().getUsdPrice(USDC), null);
    assert.equal(await source().getUsdPrice('toString'), null);
    assert.equal(server.requests.length, 0);
  });

  test('error statuses are no price', async () => {
    for (const status of [500, 502, 503, 401, 404]) {
      server.answer(json(status, { error: 'nope' }));
      assert.equal(await source().getUsdPrice(NATIVE_SOL_MINT), null, String(status));
    }
    assert.equal(warnings.length, 5);
  });

  test('429 pauses the provider until Retry-After has passed', async () => {
    const cg = source();
    server.answer(json(429, { status: { error_code: 429 } }, { 'retry-after': '60' }));
    assert.equal(await cg.getUsdPrice(NATIVE_SOL_MINT), null);
    server.answer(json(200, { solana: { usd: 150, last_updated_at: UPDATED_AT } }));
    clock.advance(59_000);
    assert.equal(await cg.getUsdPrice(NATIVE_SOL_MINT), null);
    assert.equal(server.requests.length, 1);
    clock.advance(1_000);
    assert.equal((await cg.getUsdPrice(NATIVE_SOL_MINT))?.priceUsd, '150');
    assert.equal(server.requests.length, 2);
  });

  test('malformed JSON and missing or mistyped fields are no price', async () => {
    const answers: unknown[] = [
      '{"solana": {"usd": 147.4',
      'not json',
      [],
      null,
      {},
      { solana: null },
      { solana: { usd: 147.48 } },
      { solana: { last_updated_at: UPDATED_AT } },
      { solana: { usd: '147.48', last_updated_at: UPDATED_AT } },
      { solana: { usd: 0, last_updated_at: UPDATED_AT } },
      { solana: { usd: -1, last_updated_at: UPDATED_AT } },
      { solana: { usd: 147.48, last_updated_at: '1767225590' } },
      { solana: { usd: 147.48, last_updated_at: 1.5 } },
      { bitcoin: { usd: 90_000, last_updated_at: UPDATED_AT } },
    ];
    for (const body of answers) {
      server.answer(json(200, body === null ? 'null' : body));
      assert.equal(await source().getUsdPrice(NATIVE_SOL_MINT), null, JSON.stringify(body));
    }
    assert.equal(server.requests.length, answers.length);
  });

  test('a provider that does not answer in time is no price', async () => {
    server.answer(hang());
    assert.equal(await source({ timeoutMs: 50 }).getUsdPrice(NATIVE_SOL_MINT), null);
    assert.deepEqual(warnings, ['price provider request failed']);
  });

  test("the caller's abort rejects with its reason", async () => {
    server.answer(hang());
    const controller = new AbortController();
    const pending = source().getUsdPrice(NATIVE_SOL_MINT, { signal: controller.signal });
    controller.abort(new Error('client went away'));
    await assert.rejects(pending, { message: 'client went away' });
  });
});
