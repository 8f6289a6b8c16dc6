import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createManualClock } from '../domain/clock.ts';
import { createFallbackPriceSource } from './fallback.ts';
import type { PriceQuote, PriceSource } from './types.ts';

const MINT = 'JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN';
const NOW = new Date('2026-01-01T00:00:00Z');

function fixedAnswer(
  name: string,
  answer: { priceUsd: string; ageMs: number } | null,
  asked: string[],
): PriceSource {
  return {
    name,
    async getUsdPrice(mint) {
      asked.push(name);
      if (!answer) return null;
      return {
        mint,
        priceUsd: answer.priceUsd,
        source: name,
        observedAt: new Date(NOW.getTime() - answer.ageMs),
      };
    },
  };
}

describe('fallback chain', () => {
  const clock = createManualClock(NOW);

  test('the first source with a fresh price answers; later ones are not asked', async () => {
    const asked: string[] = [];
    const chain = createFallbackPriceSource(
      [
        fixedAnswer('a', { priceUsd: '1', ageMs: 0 }, asked),
        fixedAnswer('b', { priceUsd: '2', ageMs: 0 }, asked),
      ],
      { clock },
    );
    assert.equal(chain.name, 'a>b');
    assert.deepEqual(await chain.getUsdPrice(MINT), {
      mint: MINT,
      priceUsd: '1',
      source: 'a',
      observedAt: NOW,
    });
    assert.deepEqual(asked, ['a']);
  });

  test('passes over sources without a price, with a stale price, or failing', async () => {
    const asked: string[] = [];
    const warnings: Array<Record<string, unknown>> = [];
    const throwing: PriceSource = {
      name: 'broken',
      async getUsdPrice() {
        asked.push('broken');
        throw new Error('bug');
      },
    };
    const chain = createFallbackPriceSource(
      [
        fixedAnswer('empty', null, asked),
        fixedAnswer('stale', { priceUsd: '1', ageMs: 60_001 }, asked),
        throwing,
        fixedAnswer('edge', { priceUsd: '3', ageMs: 60_000 }, asked),
        fixedAnswer('never', { priceUsd: '4', ageMs: 0 }, asked),
      ],
      { clock, maxAgeMs: 60_000, log: { warn: (details) => warnings.push(details) } },
    );
    const quote = (await chain.getUsdPrice(MINT)) as PriceQuote;
    assert.equal(quote.source, 'edge');
    assert.equal(quote.priceUsd, '3');
    assert.deepEqual(asked, ['empty', 'stale', 'broken', 'edge']);
    assert.deepEqual(warnings, [
      { source: 'stale', mint: MINT, ageMs: 60_001 },
      { source: 'broken', mint: MINT, reason: 'Error: bug' },
    ]);
  });

  test('default max age is 5 minutes', async () => {
    const asked: string[] = [];
    const chain = createFallbackPriceSource(
      [
        fixedAnswer('old', { priceUsd: '1', ageMs: 300_001 }, asked),
        fixedAnswer('ok', { priceUsd: '2', ageMs: 300_000 }, asked),
      ],
      { clock },
    );
    assert.equal((await chain.getUsdPrice(MINT))?.source, 'ok');
  });

  test('no source with a price: null', async () => {
    const chain = createFallbackPriceSource([fixedAnswer('a', null, []), fixedAnswer('b', null, [])], {
      clock,
    });
    assert.equal(await chain.getUsdPrice(MINT), null);
    assert.equal(await createFallbackPriceSource([], { clock }).getUsdPrice(MINT), null);
  });

  test("the caller's abort stops the chain", async () => {
    const asked: string[] = [];
    const controller = new AbortController();
    const aborting: PriceSource = {
      name: 'slow',
      async getUsdPrice(_mint, { signal } = {}) {
        asked.push('slow');
        controller.abort(new Error('gone'));
        signal?.throwIfAborted();
        return null;
      },
    };
    const chain = createFallbackPriceSource(
      [aborting, fixedAnswer('next', { priceUsd: '1', ageMs: 0 }, asked)],
      {
        clock,
      },
    );
    await assert.rejects(chain.getUsdPrice(MINT, { signal: controller.signal }), { message: 'gone' });
    assert.deepEqual(asked, ['slow']);
  });
});
