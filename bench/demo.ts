import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServiceProcess } from '../test/helpers/process.ts';
import { markdownTable } from './lib/load.ts';

/**
 * How long a newcomer's `npm run demo -- --time-travel` takes, wall time from the command to its
 * exit, beside `npm start` on a fresh data directory (the embedded chain, instant profile): a
 * token transfer of 3 hops, the same in native SOL, and `--fail` (which moves the local chain's
 * clock by itself), each BENCH_DEMO_RUNS times (default 3, the fresh service's first run
 * included), in turn. Where the time goes inside one run shows in the demo's own output: each hop's
 * lateness by the wall's clock, from the chain's clock showing its due time to the service
 * recording it.
 *
 *   npm run bench -- demo
 */
const RUNS = Number(process.env.BENCH_DEMO_RUNS ?? 3);
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error('BENCH_DEMO_RUNS takes integers of 1 or more');
const ROOT = join(import.meta.dirname, '..');

const VARIANTS = [
  { name: 'token, 3 hops', args: ['--time-travel'] },
  { name: 'native SOL, 3 hops', args: ['--time-travel', '--sol'] },
  { name: '--fail (no --time-travel)', args: ['--fail'] },
] as const;

/** Runs `npm run demo` with `args` beside the service of `dataDir`; answers its wall time in ms. */
function timeDemo(dataDir: string, args: readonly string[]): Promise<number> {
  const started = performance.now();
  const child = spawn('npm', ['run', '--silent', 'demo', '--', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), DATA_DIR: dataDir },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) =>
    child.on('close', (code) =>
      code === 0
        ? resolve(performance.now() - started)
        : reject(new Error(`npm run demo -- ${args.join(' ')} exited with ${code}:\n${stderr}`)),
    ),
  );
}

const dataDir = await mkdtemp(join(tmpdir(), 'tr-bench-demo-'));
const service = await startServiceProcess({ DATA_DIR: dataDir }, { via: 'npm' });
const times = new Map<string, number[]>(VARIANTS.map(({ name }) => [name, []]));
try {
  for (let run = 0; run < RUNS; run++) {
    for (const { name, args } of VARIANTS) times.get(name)!.push(await timeDemo(dataDir, args));
  }
} finally {
  await service.stop();
  await rm(dataDir, { recursive: true, force: true });
}

const seconds = (ms: number) => (ms / 1000).toFixed(2);
process.stdout.write(
  `${markdownTable(
    ['`npm run demo`', 'runs', 'min s', 'median s', 'max s'],
    VARIANTS.map(({ name }) => {
      const sorted = [...times.get(name)!].sort((a, b) => a - b);
      return [
        name,
        sorted.length,
        seconds(sorted[0]!),
        seconds(sorted[Math.floor((sorted.length - 1) / 2)]!),
        seconds(sorted.at(-1)!),
      ];
    }),
  )}\n`,
);
