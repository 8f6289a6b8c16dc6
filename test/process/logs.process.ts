import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { stripVTControlCharacters } from 'node:util';
import { readServiceFile } from '../../src/service-file.ts';
import { startServiceProcess } from '../helpers/process.ts';

const ROOT = join(import.meta.dirname, '..', '..');

test('`npm start` at a terminal writes readable lines: time, level, message', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'tr-logs-'));
  // util-linux's `script` runs the command on a pseudo-terminal, as a person's shell would.
  const child = spawn(
    'script',
    ['--quiet', '--flush', '--return', '--command', 'npm start --silent', '/dev/null'],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? tmpdir(),
        TERM: 'xterm-256color',
        DATA_DIR: dataDir,
        PORT: '0',
        LOCAL_RPC_PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const exited = once(child, 'exit');
  const lines: string[] = [];
  try {
    const listening = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no listening line in 60 s:\n${lines.join('\n')}`)),
        60_000,
      );
      createInterface({ input: child.stdout! }).on('line', (raw) => {
        const line = stripVTControlCharacters(raw).replace(/\r$/, '');
        lines.push(line);
        if (line.includes('Transfer Router listening')) {
          clearTimeout(timer);
          resolve(line);
        }
      });
      void exited.then(() => reject(new Error(`exited before listening:\n${lines.join('\n')}`)));
    });
    assert.match(
      listening,
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: Transfer Router listening on http:\/\/127\.0\.0\.1:\d+ \(store: embedded PGlite in /,
    );
    assert.match(lines.join('\n'), /^\[[\d:.]+\] INFO: startup: Starting: creating the database \(/m);
    assert.deepEqual(
      lines.filter((line) => line.startsWith('{')),
      [],
      'no JSON line on a terminal',
    );
    const service = await readServiceFile(dataDir);
    assert.ok(service);
    process.kill(service.pid, 'SIGTERM');
    assert.deepEqual(await exited, [0, null]);
    assert.match(lines.at(-1) ?? '', /^\[[\d:.]+\] INFO: stopped$/);
  } finally {
    if (child.exitCode === null) {
      // Whatever failed, the service goes before its data do.
      const service = await readServiceFile(dataDir);
      if (service) process.kill(service.pid, 'SIGKILL');
      child.kill('SIGKILL');
      await exited;
    }
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('piped, the same start writes JSON lines', async () => {
  const service = await startServiceProcess({});
  try {
    const logLines = service.logs.filter((line) => line.startsWith('{') || line.startsWith('['));
    assert.ok(logLines.length > 5, service.logs.join('\n'));
    for (const line of logLines) {
      const entry = JSON.parse(line) as { level: number; time: number; msg: string; pid: number };
      assert.equal(typeof entry.level, 'number');
      assert.equal(entry.pid, service.pid);
    }
  } finally {
    assert.equal(await service.stop(), 0);
  }
});
