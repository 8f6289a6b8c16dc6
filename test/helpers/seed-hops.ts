import { transferEventPayload } from '../../src/domain/events.ts';
import type { Sql } from '../../src/store/db.ts';
import { type TransferRow, toTransfer } from '../../src/store/transfer-rows.ts';
import { seedTransfers } from './seed-transfers.ts';

/** How to seed recorded hops: whose, how many, and the instant the day of them ends at. */
export interface HopSeedOptions {
  integrationId: number;
  hops: number;
  end: Date;
}

/** Hops per route, and seconds between them. */
export const HOPS_PER_ROUTE = 10;
export const INTERVAL_SECONDS = 15;
const DAY_SECONDS = 86_400;

/**
 * Inserts routes and their recorded hops straight into the store, in bulk: `hops / 10` transfers
 * (test/helpers/seed-transfers.ts) become routes of 10 hops 15 s apart, their first releases spread
 * evenly over the day before `end` (the last route's last hop due 5 min before it), and each hop
 * gets its `transfer.hop_complete` event, its payload the transfer's view as the outbox writes it,
 * its time the hop's due time plus a lateness drawn from a log-normal law (median 0.6 s, a few
 * seconds at p99), 1% of hops recorded up to a second before their due time and 0.5% of them 5 s to
 * 2 min late; the same lateness on every run. Events only: no roll-up of them. Answers the routes'
 * ids, in order of first release.
 */
export async function seedHopEvents(sql: Pick<Sql, 'query'>, options: HopSeedOptions): Promise<number[]> {
  const { integrationId, end } = options;
  const count = Math.ceil(options.hops / HOPS_PER_ROUTE);
  const start = new Date(end.getTime() - 2 * DAY_SECONDS * 1000);
  await seedTransfers(sql, { integrationId, mode: 'test', count, start, days: 1 });
  const span = DAY_SECONDS - 300 - (HOPS_PER_ROUTE - 1) * INTERVAL_SECONDS;
  const { rows: routes } = await sql.query<{ id: string }>(
    `UPDATE transfers t
        SET hops = $2, interval_seconds = $3,
            first_release_at = $4::bigint + floor((r.rank - 1) * $5::float8 / $6)::bigint
       FROM (SELECT id, row_number() OVER (ORDER BY id) AS rank FROM transfers WHERE integration_id = $1) r
      WHERE r.id = t.id
      RETURNING t.id`,
    [
      integrationId,
      HOPS_PER_ROUTE,
      INTERVAL_SECONDS,
      Math.floor(end.getTime() / 1000) - DAY_SECONDS,
      span,
      count,
    ],
  );
  const ids = routes.map((route) => Number(route.id)).sort((a, b) => a - b);
  const { rows: sample } = await sql.query<TransferRow>('SELECT * FROM transfers WHERE id = $1', [ids[0]]);
  const template = transferEventPayload({
    id: 'evt_template',
    type: 'transfer.hop_complete',
    transfer: toTransfer(sample[0]!),
    sequence: 1,
    createdAt: end,
  });
  // u(salt): a uniform number in (0, 1) drawn from the route and hop, the same on every run.
  const u = (salt: string) =>
    `((('x' || substr(md5('${salt}:' || t.id || ':' || k), 1, 8))::bit(32)::bigint + 0.5) / 4294967296.0)`;
  const chunk = 10_000;
  for (let from = 0; from < ids.length; from += chunk) {
    await sql.query(
      `INSERT INTO events (id, integration_id, mode, type, transfer_id, sequence, payload, created_at)
       SELECT 'evt_' || md5(t.id || ':' || k), t.integration_id, t.mode, 'transfer.hop_complete', t.id, 100 + k,
              jsonb_set(jsonb_set(jsonb_set($2::jsonb, '{id}', to_jsonb('evt_' || md5(t.id || ':' || k))),
                                  '{sequence}', to_jsonb(100 + k)),
                        '{data,transfer,progress,hopsCompleted}', to_jsonb(k))::json,
              to_timestamp(round(t.first_release_at + (k - 1) * t.interval_seconds + late.seconds, 3))
         FROM transfers t, generate_series(1, t.hops) k,
              LATERAL (SELECT CASE WHEN ${u('tail')} < 0.01 THEN -1 * ${u('early')}
                                   WHEN ${u('tail')} < 0.015 THEN 5 + 115 * ${u('late')}
                                   ELSE 0.6 * exp(0.6 * sqrt(-2 * ln(${u('a')})) * cos(2 * pi() * ${u('b')}))
                              END::numeric AS seconds) late
        WHERE t.id = ANY($1::bigint[])`,
      [ids.slice(from, from + chunk), JSON.stringify(template)],
    );
  }
  return ids;
}
