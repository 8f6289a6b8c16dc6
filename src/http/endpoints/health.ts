import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { BlockHeightReader } from '../../chain/types.ts';
import { AppError } from '../../domain/errors.ts';
import type { Db } from '../../store/db.ts';
import { errorResponses } from '../schemas/common.ts';

/** A dependency the service needs to serve traffic. */
export interface ReadinessCheck {
  name: string;
  check(signal: AbortSignal): Promise<void>;
}

/** The database answers a query. */
export function databaseCheck(db: Pick<Db, 'query'>): ReadinessCheck {
  return { name: 'database', check: async () => void (await db.query('SELECT 1')) };
}

/** The chain's RPC endpoint answers. */
export function chainCheck(chain: Pick<BlockHeightReader, 'getSlot'>): ReadinessCheck {
  return { name: 'chain', check: async (signal) => void (await chain.getSlot({ signal })) };
}

const READINESS_TIMEOUT_MS = 2_000;

/** `/healthz` (the process is alive) and `/readyz` (its database and chain answer). */
export async function healthEndpoints(app: FastifyInstance, options: { checks: ReadinessCheck[] }) {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['Health'],
        operationId: 'getHealth',
        summary: 'Liveness',
        response: { 200: z.object({ status: z.literal('ok') }), ...errorResponses },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['Health'],
        operationId: 'getReadiness',
        summary: 'Readiness: database and chain reachable',
        response: {
          200: z.object({ status: z.literal('ready'), checks: z.record(z.string(), z.literal('ok')) }),
          ...errorResponses,
        },
      },
    },
    async () => {
      const results = await Promise.all(
        options.checks.map(async ({ name, check }) => {
          const signal = AbortSignal.timeout(READINESS_TIMEOUT_MS);
          try {
            // Raced against the deadline: a check that ignores its signal still cannot hang readiness.
            await Promise.race([
              check(signal),
              new Promise((_resolve, reject) =>
                signal.addEventListener('abort', () => reject(signal.reason)),
              ),
            ]);
            return { name, ok: true };
          } catch {
            return { name, ok: false };
          }
        }),
      );
      const failing = results.filter((result) => !result.ok).map((result) => result.name);
      if (failing.length > 0) {
        throw new AppError('MH_091', `Not ready: ${failing.join(', ')} unreachable.`, {
          headers: { 'retry-after': '5' },
        });
      }
      return {
        status: 'ready' as const,
        checks: Object.fromEntries(results.map((r) => [r.name, 'ok' as const])),
      };
    },
  );
}
