import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { hang, json, startTestServer, type TestServer } from '../../test/helpers/http-server.ts';
import { createManualClock } from '../domain/clock.ts';
import { createFixedPriceSource, DEFAULT_SOL_PRICE_USD, fixedPricesSchema } from './fixed.ts';
import { createPriceResolver, createPriceResolverFromConfig, type PriceConfig } from './resolver.ts';
import { NATIVE_SOL_MINT, type PriceSource } from './types.ts';

const NOW = new Date('2026-01-01T00:00:00Z');
const NOW_SECONDS = NOW.getTime() / 1000;
const JUP = 'JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

describe('fixed price table', () => {
  const clock = createManualClock(NOW);

  test('knows the default SOL price with no configuration', async () => {
    assert.equal(DEFAULT_SOL_PRICE_USD, '150');
    assert.deepEqual(await createFixedPriceSource({ clock }).getUsdPrice(NATIVE_SOL_MINT), {
      mint: NATIVE_SOL_MINT,
      priceUsd: '150',
      source: 'fixed',
      observedAt: NOW,
    });
    assert.equal(await createFixedPriceSource({ clock }).getUsdPrice(USDC), null);
  });

  test('PRICES adds mints and may override SOL', async () => {
    const prices = fixedPricesSchema.parse({ [USDC]: 1, [NATIVE_SOL_MINT]: '142.50' });
    assert.deepEqual(prices, { [USDC]: '1', [NATIVE_SOL_MINT]: '142.5' });
    const table = createFixedPriceSource({ prices, clock });
    assert.equal((await table.getUsdPrice(USDC))?.priceUsd, '1');
    assert.equal((await table.getUsdPrice(NATIVE_SOL_MINT))?.priceUsd, '142.5');
    assert.equal(await table.getUsdPrice('constructor'), null);
  });

  test('PRICES refuses bad mints and prices', () => {
    const paths = (input: unknown) => {
      const result = fixedPricesSchema.safeParse(input);
      return result.success ? [] : result.error.issues.map((issue) => issue.path.join('.'));
    };
    assert.deepEqual(paths({ [USDC]: 0 }), [USDC]);
    assert.deepEqual(paths({ [USDC]: -1 }), [USDC]);
    assert.deepEqual(paths({ [USDC]: 'one' }), [USDC]);
    assert.deepEqual(paths({ 'not-a-mint': 1 }), ['not-a-mint']);
    assert.deepEqual(paths([1]), ['']);
  });
});

describe('client price', () => {
  const clock = createManualClock(NOW);
  const unreachable: PriceSource = {
    name: 'unreachable',
    getUsdPrice: () => Promise.reject(new Error('must not be asked')),
  };

  test('tokenPriceUsd wins over every source', async () => {
    const resolver = createPriceResolver({ source: unreachable, clock });
    assert.deepEqual(await resolver.resolveUsdPrice(JUP, { tokenPriceUsd: 0.1 }), {
      mint: JUP,
      priceUsd: '0.1',
      source: 'client',
      observedAt: NOW,
    });
    assert.equal((await resolver.resolveUsdPrice(JUP, { tokenPriceUsd: 2.5e-9 }))?.priceUsd, '0.0000000025');
    assert.equal((await resolver.resolveUsdPrice(JUP, { tokenPriceUsd: 0 }))?.priceUsd, '0');
  });

  test('an invalid tokenPriceUsd is a programming error (the edge validates it)', async () => {
    const resolver = createPriceResolver({ source: unreachable, clock });
    await assert.rejects(resolver.resolveUsdPrice(JUP, { tokenPriceUsd: -1 }), RangeError);
    await assert.rejects(resolver.resolveUsdPrice(JUP, { tokenPriceUsd: Number.NaN }), RangeError);
  });
});

describe('resolver from configuration, against local provider servers', () => {
  let coingecko: TestServer;
  let jupiter: TestServer;
  let clock: ReturnType<typeof createManualClock>;
  const config = (extra: Partial<PriceConfig> = {}): PriceConfig => ({
    sources: ['coingecko', 'jupiter', 'fixed'],
    coingecko: { baseUrl: coingecko.url, apiKey: 'cg' },
    jupiter: { baseUrl: jupiter.url, apiKey: 'jup' },
    // Ample for a local answer on a busy machine; a hanging provider costs a test this long.
    timeoutMs: 1_000,
    ...extra,
  });
  const solFromCoinGecko = (usd: number, updatedAt = NOW_SECONDS - 20) =>
    json(200, { solana: { usd, last_updated_at: updatedAt } });
  const fromJupiter = (mint: string, usdPrice: number) =>
    json(200, { [mint]: { usdPrice, blockId: 348004023, decimals: 9, priceChange24h: 1.29 } });

  before(async () => {
    coingecko = await startTestServer();
    jupiter = await startTestServer();
  });
  after(async () => {
    await coingecko.close();
    await jupiter.close();
  });
  beforeEach(() => {
    coingecko.requests.length = 0;
    jupiter.requests.length = 0;
    clock = createManualClock(NOW);
  });

  test('SOL from CoinGecko, other mints from Jupiter', async () => {
    coingecko.answer(solFromCoinGecko(147.48));
    jupiter.answer(fromJupiter(JUP, 0.41));
    const resolver = createPriceResolverFromConfig(config(), { clock });
    assert.deepEqual(await resolver.resolveUsdPrice(NATIVE_SOL_MINT), {
      mint: NATIVE_SOL_MINT,
      priceUsd: '147.48',
      source: 'coingecko',
      observedAt: new Date(NOW.getTime() - 20_000),
    });
    assert.deepEqual(await resolver.resolveUsdPrice(JUP), {
      mint: JUP,
      priceUsd: '0.41',
      source: 'jupiter',
      observedAt: NOW,
    });
    assert.equal(coingecko.requests.length, 1);
    assert.equal(jupiter.requests.length, 1);
  });

  test('answers are cached for 30 s per provider', async () => {
    coingecko.answer(solFromCoinGecko(147.48, NOW_SECONDS));
    const resolver = createPriceResolverFromConfig(config(), { clock });
    await resolver.resolveUsdPrice(NATIVE_SOL_MINT);
    coingecko.answer(solFromCoinGecko(148, NOW_SECONDS + 30));
    clock.advance(29_999);
    assert.equal((await resolver.resolveUsdPrice(NATIVE_SOL_MINT))?.priceUsd, '147.48');
    assert.equal(coingecko.requests.length, 1);
    clock.advance(1);
    assert.equal((await resolver.resolveUsdPrice(NATIVE_SOL_MINT))?.priceUsd, '148');
    assert.equal(coingecko.requests.length, 2);
  });

  test('CoinGecko failing, timing out or stale: Jupiter answers for SOL', async () => {
    jupiter.answer(fromJupiter(NATIVE_SOL_MINT, 146.9));
    const cases = [
      json(503, { error: 'down' }),
      json(429, {}, { 'retry-after': '10' }),
      json(200, '{"solana":'),
      hang(),
      solFromCoinGecko(147.48, NOW_SECONDS - 301),
    ];
    for (const answer of cases) {
      coingecko.answer(answer);
      const resolver = createPriceResolverFromConfig(config(), { clock });
      const quote = await resolver.resolveUsdPrice(NATIVE_SOL_MINT);
      assert.deepEqual(quote, {
        mint: NATIVE_SOL_MINT,
        priceUsd: '146.9',
        source: 'jupiter',
        observedAt: NOW,
      });
    }
    assert.equal(coingecko.requests.length, cases.length);
  });

  test('both providers down: the fixed table answers for SOL, nothing for other mints', async () => {
    coingecko.answer(json(500, {}));
    jupiter.answer(json(502, {}));
    const resolver = createPriceResolverFromConfig(config({ fixedPrices: { [USDC]: '1' } }), { clock });
    assert.equal((await resolver.resolveUsdPrice(NATIVE_SOL_MINT))?.source, 'fixed');
    assert.equal((await resolver.resolveUsdPrice(USDC))?.priceUsd, '1');
    assert.equal(await resolver.resolveUsdPrice(JUP), null);
  });

  test('the stale-age limit is configurable', async () => {
    coingecko.answer(solFromCoinGecko(147.48, NOW_SECONDS - 61));
    jupiter.answer(json(200, {}));
    const strict = createPriceResolverFromConfig(config({ sources: ['coingecko'], maxAgeMs: 60_000 }), {
      clock,
    });
    assert.equal(await strict.resolveUsdPrice(NATIVE_SOL_MINT), null);
    const lenient = createPriceResolverFromConfig(config({ sources: ['coingecko'], maxAgeMs: 61_000 }), {
      clock,
    });
    assert.equal((await lenient.resolveUsdPrice(NATIVE_SOL_MINT))?.priceUsd, '147.48');
  });

  test('a fixed-only deployment never touches the network', async () => {
    const resolver = createPriceResolverFromConfig({ sources: ['fixed'] }, { clock });
    assert.equal((await resolver.resolveUsdPrice(NATIVE_SOL_MINT))?.priceUsd, '150');
    assert.equal(await resolver.resolveUsdPrice(JUP), null);
    assert.equal(coingecko.requests.length + jupiter.requests.length, 0);
  });

  test("the caller's abort rejects the lookup", async () => {
    coingecko.answer(hang());
    const resolver = createPriceResolverFromConfig(config({ timeoutMs: 10_000 }), { clock });
    const controller = new AbortController();
    const pending = resolver.resolveUsdPrice(NATIVE_SOL_MINT, { signal: controller.signal });
    controller.abort(new Error('client went away'));
    await assert.rejects(pending, { message: 'client went away' });
    const aborted = AbortSignal.abort(new Error('before start'));
    await assert.rejects(resolver.resolveUsdPrice(JUP, { signal: aborted }), { message: 'before start' });
  });
});
