import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { createManualClock } from '../domain/clock.ts';
import { createCachedPriceSource } from './cache.ts';
import type { PriceQuote, PriceSource } from './types.ts';

const MINT = 'JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN';

// An upstream whose answers the test settles by hand, counting how often it is asked.
function createUpstream(clock: { now(): Date }) {
  const waiting: Array<(quote: PriceQuote | null) => void> = [];
  let price: string | null = '1.5';
  const upstream = {
    calls: 0,
    /** When true, answers wait until `settle()`. */
    manual: false,
    setPrice(next: string | null) {
      price = next;
    },
    settle() {
      for (const resolve of waiting.splice(0)) {
        resolve(
          price === null ? null : { mint: MINT, priceUsd: price, source: 'up', observedAt: clock.now() },
        );
      }
    },
    source: {
      name: 'up',
      getUsdPrice(mint: string) {
        upstream.calls += 1;
        const answer = new Promise<PriceQuote | null>((resolve) => waiting.push(resolve));
        if (!upstream.manual) upstream.settle();
        return answer.then((quote) => (quote ? { ...quote, mint } : null));
      },
    } satisfies PriceSource,
  };
  return upstream;
}

describe('price cache', () => {
  let clock: ReturnType<typeof createManualClock>;
  let upstream: ReturnType<typeof createUpstream>;
  beforeEach(() => {
    clock = createManualClock(new Date('2026-01-01T00:00:00Z'));
    upstream = createUpstream(clock);
  });

  test('reuses an answer for the TTL, then asks again', async () => {
    const cached = createCachedPriceSource(upstream.source, { clock, ttlMs: 30_000 });
    assert.equal(cached.name, 'up');
    const first = await cached.getUsdPrice(MINT);
    assert.equal(first?.priceUsd, '1.5');
    upstream.setPrice('1.6');
    clock.advance(29_999);
    assert.deepEqual(await cached.getUsdPrice(MINT), first);
    assert.equal(upstream.calls, 1);
    clock.advance(1);
    assert.equal((await cached.getUsdPrice(MINT))?.priceUsd, '1.6');
    assert.equal(upstream.calls, 2);
  });

  test('remembers "no price" only briefly', async () => {
    const cached = createCachedPriceSource(upstream.source, { clock, ttlMs: 30_000, missTtlMs: 5_000 });
    upstream.setPrice(null);
    assert.equal(await cached.getUsdPrice(MINT), null);
    upstream.setPrice('2');
    clock.advance(4_999);
    assert.equal(await cached.getUsdPrice(MINT), null);
    assert.equal(upstream.calls, 1);
    clock.advance(1);
    assert.equal((await cached.getUsdPrice(MINT))?.priceUsd, '2');
    assert.equal(upstream.calls, 2);
  });

  test('concurrent callers share one upstream request', async () => {
    const cached = createCachedPriceSource(upstream.source, { clock });
    upstream.manual = true;
    const answers = Promise.all([
      cached.getUsdPrice(MINT),
      cached.getUsdPrice(MINT),
      cached.getUsdPrice(MINT),
    ]);
    upstream.settle();
    const [a, b, c] = await answers;
    assert.equal(upstream.calls, 1);
    assert.equal(a?.priceUsd, '1.5');
    assert.deepEqual(b, a);
    assert.deepEqual(c, a);
  });

  test("one caller's abort ends only its own wait", async () => {
    const cached = createCachedPriceSource(upstream.source, { clock });
    upstream.manual = true;
    const controller = new AbortController();
    const impatient = cached.getUsdPrice(MINT, { signal: controller.signal });
    const patient = cached.getUsdPrice(MINT);
    controller.abort(new Error('gone'));
    await assert.rejects(impatient, { message: 'gone' });
    upstream.settle();
    assert.equal((await patient)?.priceUsd, '1.5');
    assert.equal(upstream.calls, 1);
    const aborted = new AbortController();
    aborted.abort(new Error('already gone'));
    await assert.rejects(cached.getUsdPrice(MINT, { signal: aborted.signal }), { message: 'already gone' });
  });

  test('keeps at most maxEntries mints, dropping the oldest', async () => {
    const cached = createCachedPriceSource(upstream.source, { clock, maxEntries: 2 });
    await cached.getUsdPrice('mint-a');
    await cached.getUsdPrice('mint-b');
    await cached.getUsdPrice('mint-c');
    assert.equal(upstream.calls, 3);
    await cached.getUsdPrice('mint-c');
    await cached.getUsdPrice('mint-b');
    assert.equal(upstream.calls, 3);
    await cached.getUsdPrice('mint-a');
    assert.equal(upstream.calls, 4);
  });

  test('an upstream that throws is no price', async () => {
    const failing: PriceSource = {
      name: 'broken',
      getUsdPrice: () => Promise.reject(new Error('bug')),
    };
    assert.equal(await createCachedPriceSource(failing, { clock }).getUsdPrice(MINT), null);
  });
});
