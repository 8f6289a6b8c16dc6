import { scaleBand, scaleLinear } from 'd3-scale';
import { decimalToNumber } from '../../domain/amounts.ts';
import { utcDay } from './present.ts';

/*
 * Bar charts of a figure per day, drawn on the server as SVG: d3-scale places the bars and picks
 * round axis ticks; the template only prints the shapes. Bar heights are positions on the page,
 * never amounts: every amount a chart shows is the exact text it is given, and each chart comes
 * with a table of the same figures.
 */

/** One day of a chart: its figure as a number to draw, and as the exact text to show. */
export interface ChartDay {
  day: Date;
  value: number;
  text: string;
}

/** A chart ready to print: the SVG's shapes, and the words that say what it shows. */
export interface BarChart {
  id: string;
  title: string;
  /** What the chart shows, for screen readers (the SVG's description). */
  summary: string;
  width: number;
  height: number;
  baseline: { x1: number; x2: number; y: number };
  ticks: { y: number; label: string }[];
  bars: { x: number; y: number; width: number; height: number; label: string }[];
  dayLabels: { x: number; label: string }[];
  /** The table of the same figures. */
  rows: { day: string; text: string }[];
  /** The chart's figure added up over its days, exactly. */
  total: string;
}

// The drawing's own units: the stylesheet sizes its text for the width it is shown at.
const WIDTH = 560;
const HEIGHT = 220;
const MARGIN = { top: 12, right: 8, bottom: 30, left: 80 };
/** Day labels under the bars, at most. */
const MAX_DAY_LABELS = 5;

const round = (value: number) => Math.round(value * 10) / 10;
const SHORT_DAY = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });

/** A base-unit amount as a number to draw (a position, never an amount to show or add). */
export function plotted(raw: bigint, decimals: number): number {
  return decimalToNumber({ mantissa: raw, exponent: -decimals });
}

/**
 * A bar chart of one figure per day. `tickFormat` is a d3-format specifier for the axis (its
 * precision follows the ticks' step); `total` is the exact sum of the days' figures.
 */
export function barChart(input: {
  id: string;
  title: string;
  days: readonly ChartDay[];
  tickFormat: string;
  total: string;
}): BarChart {
  const { days } = input;
  const x = scaleBand<number>()
    .domain(days.map((_, index) => index))
    .range([MARGIN.left, WIDTH - MARGIN.right])
    .paddingInner(0.25)
    .paddingOuter(0.1);
  const highest = days.reduce<ChartDay | null>(
    (top, day) => (!top || day.value > top.value ? day : top),
    null,
  );
  const max = highest && highest.value > 0 ? highest.value : 1;
  const y = scaleLinear()
    .domain([0, max])
    .nice(4)
    .range([HEIGHT - MARGIN.bottom, MARGIN.top]);
  const format = y.tickFormat(4, input.tickFormat);
  const every = Math.ceil(days.length / MAX_DAY_LABELS);
  const first = days[0];
  const last = days.at(-1);
  const span = first && last ? `from ${utcDay(first.day)} to ${utcDay(last.day)}` : 'no days';
  const peak =
    highest && highest.value > 0 ? `; the highest, ${highest.text}, on ${utcDay(highest.day)}` : '; none';
  return {
    id: input.id,
    title: input.title,
    summary: `${input.title}, one bar per day ${span}: ${input.total} in all${peak}.`,
    width: WIDTH,
    height: HEIGHT,
    baseline: { x1: MARGIN.left, x2: WIDTH - MARGIN.right, y: round(y(0)) },
    ticks: y.ticks(4).map((value) => ({ y: round(y(value)), label: format(value) })),
    bars: days.map((day, index) => ({
      x: round(x(index) ?? 0),
      y: round(y(day.value)),
      width: round(x.bandwidth()),
      height: round(y(0) - y(day.value)),
      label: `${utcDay(day.day)}: ${day.text}`,
    })),
    dayLabels: days.flatMap((day, index) =>
      index % every === 0
        ? [{ x: round((x(index) ?? 0) + x.bandwidth() / 2), label: SHORT_DAY.format(day.day) }]
        : [],
    ),
    rows: days.map((day) => ({ day: utcDay(day.day), text: day.text })),
    total: input.total,
  };
}
