import assert from 'node:assert/strict';
import { test } from 'node:test';
import { barChart, plotted } from './charts.ts';
import { tokenAmount, usd } from './present.ts';

const day = (n: number) => new Date(Date.UTC(2026, 5, n));

test('a bar chart: one bar per day, heights in proportion, round ticks, the exact figures in its words and table', () => {
  const values = [0, 50, 100, 25];
  const chart = barChart({
    id: 'volume',
    title: 'Volume',
    tickFormat: '$,f',
    total: usd(175),
    days: values.map((value, index) => ({ day: day(index + 1), value, text: usd(value) })),
  });
  assert.equal(chart.bars.length, 4);
  const [empty, half, full, quarter] = chart.bars.map((bar) => bar.height);
  assert.equal(empty, 0);
  assert.equal(full, chart.baseline.y - 12, 'the highest bar reaches the top of the plot');
  assert.ok(
    Math.abs(half! - full! / 2) <= 0.1 && Math.abs(quarter! - full! / 4) <= 0.1,
    `${half} ${quarter}`,
  );
  assert.deepEqual(
    chart.ticks.map((tick) => tick.label),
    ['$0', '$20', '$40', '$60', '$80', '$100'],
  );
  assert.equal(chart.bars[1]!.label, '2026-06-02: $50.00');
  assert.equal(
    chart.summary,
    'Volume, one bar per day from 2026-06-01 to 2026-06-04: $175.00 in all; the highest, $100.00, on 2026-06-03.',
  );
  assert.deepEqual(chart.rows.at(-1), { day: '2026-06-04', text: '$25.00' });
});

test('a chart of nothing but zeros still draws, and says so', () => {
  const chart = barChart({
    id: 'revenue',
    title: 'Revenue',
    tickFormat: ',f',
    total: '0 SOL',
    days: [1, 2].map((n) => ({ day: day(n), value: 0, text: '0 SOL' })),
  });
  assert.deepEqual(
    chart.bars.map((bar) => [bar.height, Number.isFinite(bar.y)]),
    [
      [0, true],
      [0, true],
    ],
  );
  assert.match(chart.summary, /: 0 SOL in all; none\.$/);
});

test('amounts are drawn from base units but shown exactly', () => {
  const raw = 12_345_678_901_234_567_891n;
  assert.equal(tokenAmount(raw, 9, 'SOL'), '12345678901.234567891 SOL');
  assert.ok(Math.abs(plotted(raw, 9) - 12_345_678_901.234568) < 1e-3);
  assert.equal(plotted(1_500_000n, 6), 1.5);
});
