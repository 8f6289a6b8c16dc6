import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Runs every benchmark (`bench/*.ts`), one after another so they do not compete for the CPU,
 * or only those named on the command line (`npm run bench -- api chain`). The long ones run only
 * when named.
 */
const NAMED_ONLY = ['keeper-scale', 'lateness'];
const dir = import.meta.dirname;
const wanted = process.argv.slice(2);
const benches = readdirSync(dir)
  .filter((file) => file.endsWith('.ts') && file !== 'run.ts')
  .map((file) => file.slice(0, -3))
  .filter((name) => (wanted.length === 0 ? !NAMED_ONLY.includes(name) : wanted.includes(name)))
  .sort();

let failed = false;
for (const name of benches) {
  process.stdout.write(`\n## ${name}\n\n`);
  const result = spawnSync(process.execPath, [join(dir, `${name}.ts`)], { stdio: 'inherit' });
  if (result.status !== 0) {
    failed = true;
    process.stdout.write(`\n(${name} failed with exit code ${result.status})\n`);
  }
}
process.exit(failed ? 1 : 0);
