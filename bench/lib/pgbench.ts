import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Runs pgbench with a custom script and returns transactions per second (excluding connection
 * setup). `mode` is pgbench's query protocol: `simple` (its default), `extended` or `prepared`.
 */
export function pgbench(options: {
  url: string;
  script: string;
  clients: number;
  seconds: number;
  mode?: 'simple' | 'extended' | 'prepared';
}): number {
  const file = join(mkdtempSync(join(tmpdir(), 'pgbench-')), 'script.sql');
  writeFileSync(file, options.script);
  const result = spawnSync(
    'pgbench',
    [
      '-n',
      '-M',
      options.mode ?? 'simple',
      '-c',
      String(options.clients),
      '-j',
      '2',
      '-T',
      String(options.seconds),
      '-f',
      file,
      options.url,
    ],
    { encoding: 'utf8' },
  );
  if (result.status !== 0) throw new Error(`pgbench failed: ${result.stderr || result.error}`);
  const match = /tps = ([\d.]+) \(without initial connection time\)/.exec(result.stdout);
  if (!match) throw new Error(`unexpected pgbench output:\n${result.stdout}`);
  return Math.round(Number(match[1]));
}
