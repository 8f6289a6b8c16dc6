import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface LoadResult {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
}

export interface LoadOptions {
  name: string;
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Send a fresh Idempotency-Key with every request. */
  freshIdempotencyKey?: boolean;
  connections?: number;
  durationSeconds?: number;
}

/** Fails early with the install hint when a benchmark tool is missing. */
export function requireTool(command: string, hint: string) {
  if (spawnSync('sh', ['-c', `command -v ${command}`]).status !== 0) {
    throw new Error(`${command} is needed for the benchmarks: ${hint}`);
  }
}

const luaString = (text: string) =>
  `"${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')}"`;

function toMs(value: string, unit: string): number {
  const factor = unit === 'us' ? 0.001 : unit === 'ms' ? 1 : unit === 's' ? 1000 : 60_000;
  return Math.round(Number(value) * factor * 100) / 100;
}

/**
 * Drives HTTP load with wrk (a C load generator, so the client takes little of the CPU the server
 * needs) after a one-second warm-up, and reports throughput and latency percentiles.
 */
export function runLoad(options: LoadOptions): LoadResult {
  requireTool('wrk', 'sudo apt-get install -y wrk');
  const script = join(mkdtempSync(join(tmpdir(), 'wrk-')), 'request.lua');
  const headers = Object.entries(options.headers ?? {})
    .map(([name, value]) => `wrk.headers[${luaString(name)}] = ${luaString(value)}`)
    .join('\n');
  writeFileSync(
    script,
    `wrk.method = ${luaString(options.method ?? 'GET')}
${options.body === undefined ? '' : `wrk.body = ${luaString(options.body)}`}
${headers}
-- Every run (the warm-up too) gets its own keys: a repeated key would be a replay, not a create.
local prefix = ${luaString(`bench-${randomBytes(6).toString('hex')}-`)} .. os.getenv('BENCH_RUN') .. '-'
local counter = 0
${
  options.freshIdempotencyKey
    ? `request = function()
  counter = counter + 1
  wrk.headers["Idempotency-Key"] = prefix .. counter
  return wrk.format()
end`
    : ''
}
`,
  );
  const run = (seconds: number) =>
    spawnSync(
      'wrk',
      ['-t1', `-c${options.connections ?? 16}`, `-d${seconds}s`, '--latency', '-s', script, options.url],
      { encoding: 'utf8', env: { ...process.env, BENCH_RUN: randomBytes(4).toString('hex') } },
    );
  run(1);
  const result = run(options.durationSeconds ?? 8);
  if (result.status !== 0) throw new Error(`wrk failed: ${result.stderr}`);
  const out = result.stdout;
  const latency = (percentile: string) => {
    const match = new RegExp(`\\s${percentile}%\\s+([\\d.]+)(us|ms|s|m)`).exec(out);
    return match ? toMs(match[1]!, match[2]!) : Number.NaN;
  };
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    name: options.name,
    requestsPerSecond: Math.round(Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 'NaN')),
    p50Ms: latency('50'),
    p99Ms: latency('99'),
    errors: socketErrors ? socketErrors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
  };
}

/** Renders rows as a markdown table. */
export function markdownTable(headers: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}
