import { randomBytes } from 'node:crypto';
import { startLocalChain } from '@transfer-router/local-chain';
import Fastify from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { createMintLookup, createSolCostEstimator } from '../../src/chain/quote-reads.ts';
import { ROUTER_PROGRAM_ADDRESS } from '../../src/chain/router/program.ts';
import { createRpcChain } from '../../src/chain/rpc-chain.ts';
import { systemClock } from '../../src/domain/clock.ts';
import { DEFAULT_FEE_SCHEDULE } from '../../src/domain/fees.ts';
import { resolveSettings } from '../../src/domain/integration.ts';
import type { AuthContext } from '../../src/http/auth.ts';
import { estimateEndpoint } from '../../src/http/endpoints/transfers/estimate.ts';
import { getTransferEndpoints } from '../../src/http/endpoints/transfers/get-transfer.ts';
import { createPriceResolverFromConfig } from '../../src/prices/resolver.ts';
import { createPostgresDb } from '../../src/store/db.ts';
import { createStore } from '../../src/store/index.ts';
import { createSecretBox } from '../../src/store/secret-box.ts';

/**
 * The baselines the API is measured against: the same Fastify with no middleware at all (no
 * authentication, rate limits, idempotency, metrics or request logs) serving a trivial route, and
 * the real estimate and transfer-read route handlers for a fixed caller, on the same kind of
 * store and chain as the service.
 */
const db = createPostgresDb({ url: process.env.DATABASE_URL!, poolSize: 10 });
const store = createStore(db, {
  idempotencyTtlMs: 0,
  secrets: createSecretBox(randomBytes(32)),
});
const local = await startLocalChain({ rpcPort: 0 });
const chain = createRpcChain({ rpcUrl: local.rpcUrl });
const owner = { integrationId: Number(process.env.BENCH_INTEGRATION_ID), mode: 'test' as const };
const auth: AuthContext = {
  apiKeyId: 0,
  owner,
  integrationId: owner.integrationId,
  mode: owner.mode,
  isTest: true,
  settings: resolveSettings({}),
};

const app = Fastify({ logger: false });
app.setValidatorCompiler(validatorCompiler);
app.setSerializerCompiler(serializerCompiler);
app.decorateRequest('auth', null as unknown as AuthContext);
app.addHook('onRequest', async (request) => {
  request.auth = auth;
});
app.get('/bare/hello', async () => ({ status: 'ok' }));
await app.register(
  async (bare) => {
    await bare.register(estimateEndpoint, {
      mints: createMintLookup(chain),
      prices: createPriceResolverFromConfig({ sources: ['fixed'] }, { clock: systemClock }),
      feeSchedule: DEFAULT_FEE_SCHEDULE,
      solCosts: createSolCostEstimator({
        chain,
        priorityFees: {
          floorMicroLamportsPerCu: 0n,
          capMicroLamportsPerCu: 1_000_000n,
          hopBudgetMultiplier: 8,
        },
      }),
    });
    await bare.register(getTransferEndpoints, {
      transfers: store.transfers,
      chain,
      programAddress: ROUTER_PROGRAM_ADDRESS,
    });
  },
  { prefix: '/bare' },
);
const url = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ url })}\n`);
process.on('SIGTERM', async () => {
  await app.close();
  await local.close();
  await db.close();
  process.exit(0);
});
