#!/usr/bin/env node
// The `rpc-faults` command (`npm run rpc-faults` in the repository): a fault-injecting proxy in front
// of a JSON-RPC endpoint, to rehearse a service against a misbehaving one.
//
//   rpc-faults --upstream <url> [--port 8898] [--host 127.0.0.1] [--seed 0] [--bad-day]
//              [--drop-sends 0.09] [--rate-limited 0.05] [--retry-after 1] [--unavailable 0.01]
//              [--held 0.02] [--hold-ms 10000] [--stale-every-ms 10000] [--stale-for-ms 2000]
//              [--stale-max-age-ms 3000] [--processed-first 0.5] [--processed-for-ms 1500]
import { parseArgs } from 'node:util';
import { BAD_DAY, type FaultPlan, NO_FAULTS } from './plan.ts';
import { startFaultProxy } from './proxy.ts';

/** The plan's settings by their flag, `--drop-sends` for `dropSends`. */
const SETTINGS = (Object.keys(NO_FAULTS) as (keyof FaultPlan)[]).filter((name) => name !== 'seed');
const flag = (name: string) => name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);

async function main() {
  const { values } = parseArgs({
    options: {
      upstream: { type: 'string' },
      port: { type: 'string', default: '8898' },
      host: { type: 'string', default: '127.0.0.1' },
      seed: { type: 'string', default: NO_FAULTS.seed },
      // BAD_DAY's faults; the other flags change them.
      'bad-day': { type: 'boolean', default: false },
      ...Object.fromEntries(SETTINGS.map((name) => [flag(name), { type: 'string' as const }])),
    },
  });
  if (!values.upstream)
    throw new Error('--upstream <url> is required: the JSON-RPC endpoint to stand in front of');
  const faults: Partial<FaultPlan> = { ...(values['bad-day'] ? BAD_DAY : {}), seed: values.seed };
  for (const name of SETTINGS) {
    const value = (values as Record<string, unknown>)[flag(name)] as string | undefined;
    if (value !== undefined) (faults as Record<string, number>)[name] = Number(value);
  }
  const proxy = await startFaultProxy({
    upstream: values.upstream,
    faults,
    host: values.host,
    port: Number(values.port),
  });
  // One plain line that tools can read the address from; the plan as JSON on the next.
  process.stdout.write(`rpc-faults ready url=${proxy.url} upstream=${values.upstream}\n`);
  process.stdout.write(`${JSON.stringify({ plan: proxy.plan })}\n`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await proxy.close();
    process.stdout.write(`${JSON.stringify({ stats: proxy.stats() })}\n`);
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
