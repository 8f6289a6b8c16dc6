import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../domain/clock.ts';
import type { Owner } from '../../domain/integration.ts';
import { TRANSFER_STATUSES } from '../../domain/transfer.ts';
import { USAGE_COUNT_FIELDS } from '../../domain/usage.ts';
import type { RewardStore } from '../../store/rewards.ts';
import type { TransferStore, TransferToken } from '../../store/transfers.ts';
import { barChart, type ChartDay, plotted } from './charts.ts';
import { formField } from './form.ts';
import { pageData } from './layout.ts';
import { assetName, sol, statusLabel, statusTone, tokenAmount, usd, utcDay } from './present.ts';

const DAY_MS = 24 * 3600_000;
/** The windows the page offers, in days ending today (UTC); the first one listed is the default. */
const WINDOWS = [30, 7, 90] as const;

/** A token's name and decimals as the owner's transfers recorded them (raw units when unknown). */
function tokenOf(mint: string, tokens: ReadonlyMap<string, TransferToken>) {
  const token = tokens.get(mint);
  return {
    name: assetName(mint, token?.symbol ?? null),
    show: (raw: bigint) =>
      token ? tokenAmount(raw, token.decimals, assetName(mint, token.symbol)) : `${raw} base units`,
    plot: (raw: bigint) => plotted(raw, token?.decimals ?? 0),
  };
}

type UsageDeps = {
  transfers: Pick<TransferStore, 'usage' | 'usageByDay' | 'tokens'>;
  rewards: Pick<RewardStore, 'revenue' | 'revenueByDay'>;
  clock: Clock;
};

/**
 * `GET /dashboard/usage`: the signed-in key's usage over the last 7, 30 or 90 UTC days, as
 * `GET /usage` reports it for that window (the same store functions): volume and revenue day by
 * day as charts, each with a table of its figures, the transfers counted by their status now, and
 * the revenue per mint.
 */
export async function usagePage(app: FastifyInstance, deps: UsageDeps) {
  app.get('/usage', async (request, reply) => {
    const caller = request.consoleCaller;
    const asked = Number(formField(request.query, 'days'));
    const days = WINDOWS.find((window) => window === asked) ?? WINDOWS[0];
    const data = await usageData(deps, caller.auth.owner, days);
    reply.header('cache-control', 'no-store');
    return reply.view('usage', pageData(caller, data, 'usage'));
  });
}

/** The page's figures for the `days` ending today (UTC). */
async function usageData(deps: UsageDeps, owner: Owner, days: number) {
  const now = deps.clock.now();
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const window = { from: new Date(today - (days - 1) * DAY_MS), to: new Date(today + DAY_MS) };
  const [usage, revenue, usageDays, revenueDays] = await Promise.all([
    deps.transfers.usage(owner, window),
    deps.rewards.revenue(owner, window),
    deps.transfers.usageByDay(owner, window),
    deps.rewards.revenueByDay(owner, window),
  ]);
  const tokens = await deps.transfers.tokens(
    owner,
    revenue.byMint.map(({ mint }) => mint),
  );
  const dayList = Array.from(
    { length: days },
    (_, index) => new Date(window.from.getTime() + index * DAY_MS),
  );
  const sameDay = (day: Date) => (entry: { day: Date }) => entry.day.getTime() === day.getTime();
  const usageOn = (day: Date) => usageDays.find(sameDay(day));
  const revenueOn = (day: Date) => revenueDays.find(sameDay(day));

  const volume = barChart({
    id: 'volume',
    title: 'Volume (USD) of completed transfers, by day created',
    tickFormat: '$,f',
    total: usd(usage.totalVolumeUsd),
    days: dayList.map((day): ChartDay => {
      const value = usageOn(day)?.totalVolumeUsd ?? 0;
      return { day, value, text: usd(value) };
    }),
  });
  const flatRevenue = barChart({
    id: 'revenue-sol',
    title: 'Revenue: flat fee shares (SOL), by day created',
    tickFormat: ',f',
    total: sol(revenue.lamports),
    days: dayList.map((day): ChartDay => {
      const lamports = revenueOn(day)?.lamports ?? 0n;
      return { day, value: plotted(lamports, 9), text: sol(lamports) };
    }),
  });
  const mintRevenue = revenue.byMint.map((entry, index) => {
    const token = tokenOf(entry.mint, tokens);
    return barChart({
      id: `revenue-mint-${index + 1}`,
      title: `Revenue: percentage fee shares (${token.name}), by day created`,
      tickFormat: ',f',
      total: token.show(entry.amountRaw),
      days: dayList.map((day): ChartDay => {
        const raw = revenueOn(day)?.byMint.find((item) => item.mint === entry.mint)?.amountRaw ?? 0n;
        return { day, value: token.plot(raw), text: token.show(raw) };
      }),
    });
  });

  return {
    title: 'Usage',
    days,
    windows: WINDOWS.map((window) => ({ days: window, current: window === days })),
    range: `${utcDay(window.from)} to ${utcDay(new Date(window.to.getTime() - DAY_MS))} (UTC)`,
    totals: {
      transfers: usage.totalTransfers,
      volume: usd(usage.totalVolumeUsd),
      revenue: sol(revenue.lamports),
    },
    counts: TRANSFER_STATUSES.map((status) => ({
      status: statusLabel(status),
      tone: statusTone(status),
      field: USAGE_COUNT_FIELDS[status],
      count: usage[USAGE_COUNT_FIELDS[status]],
    })),
    byMint: revenue.byMint.map(({ mint, amountRaw }) => {
      const { name, show } = tokenOf(mint, tokens);
      return { mint, name, amount: show(amountRaw), raw: amountRaw.toString() };
    }),
    charts: [volume, flatRevenue, ...mintRevenue],
  };
}
