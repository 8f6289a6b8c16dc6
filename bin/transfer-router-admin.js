#!/usr/bin/env node
// The installed `transfer-router-admin`: runs admin.ts on the Node.js the project pins (the npm
// package `node`), whichever `node` the shell found first. admin.ts is TypeScript, which only that
// version runs directly; this file is plain JavaScript that any Node.js still in use can run.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
let pinned;
try {
  const manifest = require.resolve('node/package.json');
  // The package names its binary (bin/node, or bin/node.exe on Windows).
  pinned = join(dirname(manifest), JSON.parse(readFileSync(manifest, 'utf8')).bin.node);
} catch {
  process.stderr.write(
    'error: the Node.js that transfer-router pins (npm package `node`) is not installed; run `npm install` in the project\n',
  );
  process.exit(2);
}

const entry = join(dirname(fileURLToPath(import.meta.url)), 'admin.ts');
const child = spawn(pinned, [entry, ...process.argv.slice(2)], { stdio: 'inherit' });
// A signal sent to this process alone reaches the CLI too.
const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const forward = (signal) => child.kill(signal);
for (const signal of forwarded) process.on(signal, forward);
child.on('error', (error) => {
  process.stderr.write(`error: cannot run ${pinned}: ${error.message}\n`);
  process.exit(2);
});
child.on('exit', (code, signal) => {
  if (signal) {
    // End the way the CLI ended, so that a caller sees the signal.
    for (const name of forwarded) process.off(name, forward);
    process.kill(process.pid, signal);
  } else process.exit(code ?? 1);
});
