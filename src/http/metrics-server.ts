import Fastify from 'fastify';
import type { Registry } from 'prom-client';

/**
 * Serves `GET /metrics` (Prometheus text) alone, for a process without the API (`npm run worker`),
 * whose keeper and workers record their metrics in `registry`. Answers where it serves them and a
 * close that stops it.
 */
export async function startMetricsServer(registry: Registry, options: { port: number; host: string }) {
  const app = Fastify();
  app.get('/metrics', async (_request, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
  const base = await app.listen({ port: options.port, host: options.host });
  return { url: `${base}/metrics`, close: () => app.close() };
}
