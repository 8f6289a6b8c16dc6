import Fastify from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { transferView } from '../../src/domain/transfer-view.ts';
import { integerId } from '../../src/http/schemas/common.ts';
import { transferSchema } from '../../src/http/schemas/transfers.ts';
import { createPostgresDb } from '../../src/store/db.ts';
import { createTransferStore } from '../../src/store/transfers.ts';

/**
 * The baselines the API is measured against: the same Fastify with no middleware at all (no auth,
 * rate limits, idempotency, metrics or request logs), serving a trivial route and the transfer
 * read with the very handler logic and response schema of `GET /api/v1/transfers/{id}`.
 */
const db = createPostgresDb({ url: process.env.DATABASE_URL!, poolSize: 10 });
const transfers = createTransferStore(db);
const owner = { integrationId: Number(process.env.BENCH_INTEGRATION_ID), mode: 'test' as const };

const app = Fastify({ logger: false }).withTypeProvider<ZodTypeProvider>();
app.setValidatorCompiler(validatorCompiler);
app.setSerializerCompiler(serializerCompiler);
app.get('/bare/hello', async () => ({ status: 'ok' }));
app.get(
  '/bare/transfers/:transferId',
  { schema: { params: z.object({ transferId: integerId }), response: { 200: transferSchema } } },
  async (request) => {
    const transfer = await transfers.get(owner, request.params.transferId);
    if (!transfer) throw new Error(`no transfer ${request.params.transferId}`);
    return transferView(transfer);
  },
);
const url = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ url })}\n`);
process.on('SIGTERM', async () => {
  await app.close();
  await db.close();
  process.exit(0);
});
